"""The catalog's revision token, and the snapshots cached under it.

A plan version freezes every price and rate valid at its date (catalog.snapshots,
costs.selectors): about 20 queries and 70 ms, the same for every plan until the catalog changes.
Any save or delete in the catalog's or the rate card's tables (admin, imports, feeds,
update_or_create, loaddata) gives the revision row a new random token in the same transaction,
so a snapshot cached under the old token is never served after the change, and a write that
rolls back restores the old token together with the old rows. Writes that send no signals
(QuerySet.update, bulk_create, raw SQL) must call bump(); none does today (a unit test greps).
A cached entry also expires after CACHE_SECONDS, so a change made behind Django's back (psql)
is seen within that time.
"""

from __future__ import annotations

import json
import pickle
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

from django.db.models.signals import post_delete, post_save

CACHE_SECONDS = 600
CACHE_ENTRIES = 8
# rows that do not feed a snapshot: the revision itself, a team's quotes (read per plan, never
# cached), and the import runs' bookkeeping
NOT_SNAPSHOT_MODELS = {"catalogrevision", "supplierquote", "catalogimportrun", "feedimportrun"}

_lock = threading.Lock()
_cache: OrderedDict[tuple, tuple[float, bytes]] = OrderedDict()


def bump() -> str:
    """A new token, written in the caller's transaction."""
    from catalog.models import CatalogRevision

    token = uuid.uuid4().hex
    if not CatalogRevision.objects.filter(pk=1).update(token=token):  # one statement per write
        CatalogRevision.objects.create(pk=1, token=token)
    return token


def current() -> str:
    """The token now (one indexed read); created on first use."""
    from catalog.models import CatalogRevision

    row = CatalogRevision.objects.filter(pk=1).values_list("token", flat=True).first()
    return row if row is not None else bump()


def cached(key: tuple, build: Callable[[], object]) -> object:
    """build() under (current token, *key), kept serialised: every caller gets its own copy, so no
    plan can change another's snapshot. The token is read before the rows, so an entry never
    holds rows older than its token."""
    full = (current(), *key)
    now = time.monotonic()
    with _lock:
        hit = _cache.get(full)
        if hit is not None and now - hit[0] < CACHE_SECONDS:
            _cache.move_to_end(full)
            return pickle.loads(hit[1])
    # JSON-normalised first (a copy reads exactly as a stored snapshot does), kept as a pickle of
    # that: our own bytes in this process's memory, and a copy costs half of json.loads
    data = json.loads(json.dumps(build()))
    blob = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    with _lock:
        _cache[full] = (now, blob)
        _cache.move_to_end(full)
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return data


def clear() -> None:
    with _lock:
        _cache.clear()


def _changed(sender, **kwargs) -> None:
    if sender._meta.model_name not in NOT_SNAPSHOT_MODELS:
        bump()


def watch(app_config) -> None:
    """Connect every model of the app (AppConfig.ready): their writes change the token."""
    for model in app_config.get_models():
        if model._meta.model_name in NOT_SNAPSHOT_MODELS:
            continue
        uid = f"catalog.revision:{model._meta.label_lower}"
        post_save.connect(_changed, sender=model, dispatch_uid=uid + ":save", weak=False)
        post_delete.connect(_changed, sender=model, dispatch_uid=uid + ":delete", weak=False)
