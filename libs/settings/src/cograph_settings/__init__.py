"""Typed settings read from COGRAPH_<SECTION>__<KEY> environment variables."""

from cograph_settings.loader import SettingsError, load_settings, settings_table
from cograph_settings.model import (
    ApiToken,
    AuthSettings,
    CollectionsSettings,
    DatabaseSettings,
    EmbeddingSettings,
    GatewaySettings,
    GrpcSettings,
    RepoDocsSettings,
    SearchSettings,
    ServiceEndpoint,
    Settings,
    TelemetrySettings,
)

__all__ = [
    "ApiToken",
    "AuthSettings",
    "CollectionsSettings",
    "DatabaseSettings",
    "EmbeddingSettings",
    "GatewaySettings",
    "GrpcSettings",
    "RepoDocsSettings",
    "SearchSettings",
    "ServiceEndpoint",
    "Settings",
    "SettingsError",
    "TelemetrySettings",
    "load_settings",
    "settings_table",
]
