"""Read-only catalog API, included at /api/v1/ by config/urls.py."""

from rest_framework.routers import SimpleRouter

from catalog.api import views

router = SimpleRouter()
router.register("accelerators", views.AcceleratorViewSet, basename="catalog-accelerator")
router.register("cloud-offers", views.CloudOfferViewSet, basename="catalog-cloud-offer")
router.register("server-platforms", views.ServerPlatformViewSet, basename="catalog-server-platform")
router.register("storage-tiers", views.StorageTierViewSet, basename="catalog-storage-tier")
router.register("network-options", views.NetworkOptionViewSet, basename="catalog-network-option")
router.register("hardware-prices", views.HardwarePriceViewSet, basename="catalog-hardware-price")
router.register("exchange-rates", views.ExchangeRateViewSet, basename="catalog-exchange-rate")
router.register("vat-rates", views.VatRateViewSet, basename="catalog-vat-rate")
router.register("electricity-tariffs", views.ElectricityTariffViewSet, basename="catalog-electricity-tariff")

router.register("providers", views.ProviderViewSet, basename="catalog-provider")
router.register("published-prices", views.PublishedPriceViewSet, basename="catalog-published-price")

urlpatterns = router.urls
