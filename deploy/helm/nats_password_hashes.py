"""The Secret of bcrypt hashes the NATS pods read, made from the passwords Secret the opolyx
pods read (`nats.auth.existingSecret`):

    kubectl -n opolyx get secret opolyx-nats-credentials -o json \\
      | .tools/bin/uv run python deploy/helm/nats_password_hashes.py \\
      | kubectl -n opolyx apply -f -

Reads the Secret as `kubectl get -o json` prints it and writes a Secret manifest with the
same keys (one per role), each value the role's hash **in double quotes**: nats-server reads
a referenced variable's value as configuration, so an unquoted `$2b$...` would be taken for
another variable reference and the server would not start (nats-server 2.15.1). The cost
factor is `nats_server_config`'s (random 256-bit passwords need no key stretching; the
server pays it on every connection). Each run salts anew: apply it, then restart the NATS
pods (`kubectl rollout restart statefulset/nats`) after a password changed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Mapping
from typing import Any

from opolyx_contracts.permissions import ROLES
from opolyx_service.nats_server_config import bcrypt_hash

HASHES_SECRET = "opolyx-nats-password-hashes"
"""The Secret this script writes and `nats_values.py` points the NATS pods at."""


def quoted_hash(password: str) -> str:
    """What a NATS pod's variable holds: the hash as a quoted configuration string."""
    return f'"{bcrypt_hash(password)}"'


def hashes_secret(passwords_secret: Mapping[str, Any], name: str = HASHES_SECRET) -> dict[str, Any]:
    """The hashes Secret for `passwords_secret` (a Secret object, `data` base64-encoded)."""
    data: Mapping[str, str] = passwords_secret.get("data") or {}
    missing = sorted(set(ROLES) - set(data))
    if missing:
        raise ValueError(f"the passwords Secret has no key for: {', '.join(missing)}")
    metadata: Mapping[str, Any] = passwords_secret.get("metadata") or {}
    hashed = {
        role: base64.b64encode(quoted_hash(base64.b64decode(data[role]).decode()).encode())
        for role in ROLES
    }
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name},
        "type": "Opaque",
        "data": {role: value.decode() for role, value in hashed.items()},
    }
    if "namespace" in metadata:
        secret["metadata"]["namespace"] = metadata["namespace"]
    return secret


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default=HASHES_SECRET, help="name of the hashes Secret")
    args = parser.parse_args(argv)
    try:
        secret = hashes_secret(json.load(sys.stdin), args.name)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"nats_password_hashes: {exc}", file=sys.stderr)
        return 1
    json.dump(secret, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
