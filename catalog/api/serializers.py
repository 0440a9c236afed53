"""Read-only output serializers. Money and specs are decimal strings; unknown figures are null."""

from rest_framework import serializers

from catalog import models as m

SOURCE = ["source_title", "source_url", "source_date", "retrieved_on", "notes"]
VALIDITY = ["currency", "includes_vat", "valid_from", "valid_to"]


class AcceleratorSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.Accelerator
        exclude = ["id"]


class ServerPlatformSerializer(serializers.ModelSerializer):
    included_accelerator = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    included_cpu = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = m.ServerPlatform
        exclude = ["id"]


class CloudOfferSerializer(serializers.ModelSerializer):
    accelerator = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = m.CloudOffer
        fields = "__all__"


class StorageTierSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.StorageTier
        fields = "__all__"


class NetworkOptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.NetworkOption
        fields = "__all__"


class HardwarePriceSerializer(serializers.ModelSerializer):
    item_kind = serializers.SerializerMethodField()
    item = serializers.SerializerMethodField()

    class Meta:
        model = m.HardwarePrice
        fields = ["id", "item_kind", "item", "price", "price_kind", *VALIDITY, *SOURCE]

    def get_item_kind(self, obj) -> str:
        return "accelerator" if obj.accelerator_id else "server_platform" if obj.server_platform_id else "cpu"

    def get_item(self, obj) -> str:
        return obj.item.slug


class ExchangeRateSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.ExchangeRate
        fields = "__all__"


class VatRateSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.VatRate
        fields = "__all__"


class ElectricityTariffSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.ElectricityTariff
        fields = "__all__"


class ProviderRegionSerializer(serializers.ModelSerializer):
    class Meta:
        model = m.ProviderRegion
        fields = ["region", "jurisdiction", "location", *SOURCE]


class ProviderSerializer(serializers.ModelSerializer):
    regions = ProviderRegionSerializer(many=True, read_only=True)

    class Meta:
        model = m.Provider
        fields = ["id", "name", "country", "kind", "priced", "regions", *SOURCE]


class PublishedPriceSerializer(serializers.ModelSerializer):
    accelerator = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = m.PublishedPrice
        exclude = ["natural_key"]
