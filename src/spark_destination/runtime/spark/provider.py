"""The process's one SparkSession, built lazily and rebuilt when its JVM dies.

A Python process can hold only one SparkContext, so the first configuration that needs Spark
fixes the JVM (master, memory, jars); each request then gets a child session (own temp views
and SQL settings) with its catalog registered.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from spark_destination.core.config import DestinationConfig, Storage
from spark_destination.core.errors import (
    ConfigurationError,
    DestinationError,
    ServiceUnavailableError,
    SparkLostError,
)
from spark_destination.runtime.spark import jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from spark_destination.runtime.spark.catalogs import CatalogSpec
    from spark_destination.runtime.spark.session import SparkSettings
    from spark_destination.runtime.spark.storage import S3Storage

log = logging.getLogger(__name__)


class SessionProvider:
    """Builds the one SparkSession lazily, from the first configuration that needs it."""

    def __init__(
        self,
        build: Callable[[DestinationConfig], SparkSession],
        check: Callable[[SparkSession, DestinationConfig], None],
        register_catalog: Callable[[SparkSession, CatalogSpec], None],
        configure: Callable[[SparkSession, DestinationConfig], None] = lambda _s, _c: None,
        stop: Callable[[SparkSession], None] | None = None,
    ) -> None:
        self._build = build
        self._configure = configure
        self._check = check
        self._register_catalog = register_catalog
        # None for a session the caller owns (``shared``): stopping it is the caller's job.
        self._stop = stop
        self._root: SparkSession | None = None
        self._root_config: DestinationConfig | None = None
        self._lock = threading.Lock()
        # An injected session cannot be rebuilt: only a provider that built its own can.
        self._rebuildable = True

    @classmethod
    def embedded(cls) -> SessionProvider:
        from spark_destination.runtime.spark import session as spark_session

        return cls(
            build=lambda config: spark_session.build_session(settings_for(config)),
            check=lambda s, config: spark_session.check_compatible(s, settings_for(config)),
            register_catalog=spark_session.register_catalog,
            configure=lambda s, config: spark_session.apply_runtime_conf(s, settings_for(config)),
            stop=_stop_session,
        )

    @classmethod
    def shared(cls, session: SparkSession, config: DestinationConfig) -> SessionProvider:
        """Wrap an existing session (tests and embedding applications inject theirs)."""
        from spark_destination.runtime.spark import session as spark_session

        provider = cls(
            build=lambda _config: session,
            check=lambda s, c: spark_session.check_compatible(s, settings_for(c)),
            register_catalog=spark_session.register_catalog,
            configure=lambda s, config: spark_session.apply_runtime_conf(s, settings_for(config)),
        )
        provider._root, provider._root_config = session, config
        provider._rebuildable = False
        return provider

    @property
    def started(self) -> bool:
        return self._root is not None

    def root(self, config: DestinationConfig) -> SparkSession:
        with self._lock:
            if self._root is not None and self._rebuildable and not jvm.alive(self._root):
                log.warning("the Spark JVM is gone (killed or out of memory): starting a new one")
                jvm.discard(self._root)
                self._root = None
            if self._root is None:
                log.info("starting Spark (master %s)", config.spark_master)
                self._root = self._build(config)
                self._root_config = config
            else:
                self._check(self._root, config)
            return self._root

    def stop(self) -> None:
        """Stop the session this provider built (and its JVM); a later request starts anew."""
        with self._lock:
            root, self._root, self._root_config = self._root, None, None
            if root is not None and self._stop is not None:
                log.info("stopping Spark")
                self._stop(root)

    def explain(self, exc: Exception) -> Exception:
        """``exc``, or a ``SparkLostError`` saying so if the JVM died under the request, or a
        ``ServiceUnavailableError`` if a service the request needed did not answer."""
        from spark_destination.runtime.execute.transient import is_unreachable

        root = self._root
        if isinstance(exc, DestinationError):
            return exc
        if root is None or jvm.alive(root):
            if is_unreachable(exc):
                return ServiceUnavailableError(
                    "the catalog or the object store did not answer (Fivetran retries)"
                )
            return exc
        return SparkLostError(
            "the Spark JVM stopped while the request ran (killed or out of memory); nothing "
            "was committed beyond what Iceberg committed atomically; the next request starts a "
            "new Spark session: retry the request"
        )

    def for_request(self, config: DestinationConfig) -> SparkSession:
        """A child session (own temp views and SQL conf) with the request's catalog set up."""
        root = self.root(config)
        child = root.newSession()
        self._configure(child, config)
        assert self._root_config is not None
        spec = settings_for(config).catalog_spec
        if spec != settings_for(self._root_config).catalog_spec:
            self._register_catalog(child, spec)
        return child


def _stop_session(session: SparkSession) -> None:
    from spark_destination.runtime.spark.shutdown import stop_session

    stop_session(session)


def settings_for(config: DestinationConfig) -> SparkSettings:
    from spark_destination.runtime.spark.session import SparkSettings

    return SparkSettings(
        master=config.spark_master,
        warehouse=config.warehouse,
        catalog=config.catalog,
        driver_memory=config.driver_memory,
        executor_memory=config.executor_memory,
        executor_cores=config.executor_cores,
        extra_packages=config.extra_packages,
        catalog_type=config.catalog_type,
        catalog_uri=config.catalog_uri,
        catalog_credential=config.catalog_credential,
        catalog_auth=config.catalog_auth,
        catalog_signing_name=config.catalog_signing_name,
        s3=s3_storage(config),
        jars_mode=config.jar_source,
        extra_conf=config.spark_conf,
        table_format=config.table_format,
    )


def s3_storage(config: DestinationConfig) -> S3Storage | None:
    """The configuration's S3 settings, or None for local storage."""
    from spark_destination.runtime.spark.storage import S3Storage

    if config.storage is not Storage.S3:
        if config.s3_access_key_id or config.s3_secret_access_key or config.s3_endpoint:
            raise ConfigurationError(
                "the s3_* settings apply to storage s3; set storage s3 or clear them"
            )
        return None
    return S3Storage(
        region=config.s3_region,
        endpoint=config.s3_endpoint,
        credentials=config.s3_credentials,
        access_key_id=config.s3_access_key_id,
        secret_access_key=config.s3_secret_access_key,
    )
