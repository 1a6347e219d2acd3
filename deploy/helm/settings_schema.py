"""The `settings` part of the chart's values.schema.json, generated from the services' settings
models, so `helm install` refuses a setting a service does not have (pydantic-settings would
ignore it silently) or a value of the wrong type or range.

    .tools/bin/uv run python deploy/helm/settings_schema.py          # rewrite the schema
    .tools/bin/uv run python deploy/helm/settings_schema.py --check  # exit 1 if out of date

`make chart` runs the check. Settings the chart fills in itself (ports, paths, the data
folder) and secrets (they come from Secrets, never from values) are left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from opolyx_bots.worker import BotsSettings
from opolyx_chat.settings import ChatSettings
from opolyx_gateway.settings import GatewaySettings
from opolyx_lobby.settings import LobbySettings
from opolyx_progression.settings import ProgressionSettings
from opolyx_service.settings import ServiceSettings
from opolyx_table.settings import TableSettings
from pydantic import BaseModel

SCHEMA = Path(__file__).parent / "opolyx" / "values.schema.json"

SETTINGS: dict[str, type[ServiceSettings]] = {
    "table": TableSettings,
    "lobby": LobbySettings,
    "bots": BotsSettings,
    "chat": ChatSettings,
    "progression": ProgressionSettings,
    "gateway": GatewaySettings,
}
"""Each service's settings model; its own section is the field named like the service."""

CHART_MANAGED: dict[str, set[str]] = {
    "gateway": {"signing_keys", "active_key_id", "static_dir"},
    "progression": {"database_url", "data_dir", "operator", "fault_stop_at"},
    "lobby": {"fault_stop_at"},
    "chat": {"operator"},
}
"""Fields the chart sets from its own values or Secrets, or that only tests use."""

_KEPT = ("type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def section_model(service: str) -> type[BaseModel]:
    annotation = SETTINGS[service].model_fields[service].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel), service
    return annotation


def _plain(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A field's JSON schema as values may give it: no titles or defaults, `X | None` as X,
    nested sections inline and closed."""
    if "$ref" in schema:
        return _closed(definitions[schema["$ref"].rsplit("/", 1)[1]], definitions)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return _plain(options[0], definitions)
        return {"anyOf": [_plain(o, definitions) for o in options]}
    if schema.get("format") == "password":
        raise ValueError("secrets are not values")
    plain = {key: schema[key] for key in _KEPT if key in schema}
    if schema.get("type") == "object" and "additionalProperties" in schema:
        plain["additionalProperties"] = _plain(schema["additionalProperties"], definitions)
    return plain


def _closed(model_schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name, field in model_schema.get("properties", {}).items():
        try:
            properties[name] = _plain(field, definitions)
        except ValueError:
            continue  # a secret: from a Secret only
    return {"type": "object", "properties": properties, "additionalProperties": False}


def settings_schema(service: str) -> dict[str, Any]:
    schema = section_model(service).model_json_schema()
    closed = _closed(schema, schema.get("$defs", {}))
    for name in CHART_MANAGED.get(service, set()):
        closed["properties"].pop(name, None)
    model = section_model(service).__name__
    closed["description"] = f"OPOLYX_{service.upper()}__* settings ({model})"
    return closed


def updated(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(schema))
    for service in SETTINGS:
        out["$defs"][f"{service}Settings"] = settings_schema(service)
        block = out["properties"][service]
        block["properties"]["settings"] = {"$ref": f"#/$defs/{service}Settings"}
    return out


def main(argv: list[str]) -> int:
    current = json.loads(SCHEMA.read_text())
    wanted = updated(current)
    if "--check" in argv:
        if wanted != current:
            print(f"{SCHEMA} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    SCHEMA.write_text(json.dumps(wanted, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
