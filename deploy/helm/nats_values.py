"""Values for the official NATS chart beside opolyx: three servers, JetStream on file storage,
one user per opolyx role with its permissions, and each user's password as a bcrypt hash.

    .tools/bin/uv run python deploy/helm/nats_values.py > nats-values.yaml
    helm install nats nats/nats -n opolyx -f nats-values.yaml

The users block comes from the code the local run and the tests use
(`opolyx_service.nats_server_config`). Each password is a `<< $<ROLE>_PASSWORD_HASH >>`
reference, which the NATS chart writes into the server configuration as a bare variable;
the variable comes from the Secret that `nats_password_hashes.py` makes from the passwords
Secret. So the NATS pods hold hashes only; the clear passwords stay in the Secret the opolyx
chart mounts, one key per pod.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

# The script's folder is on the path when run as a script (the README's command).
from nats_password_hashes import HASHES_SECRET
from opolyx_contracts.permissions import ROLES
from opolyx_service.nats_server_config import render_server_config


def hash_variable(role: str) -> str:
    """The environment variable of a NATS pod that holds `role`'s hash."""
    return f"{role.upper()}_PASSWORD_HASH"


def nats_values(
    hashes_secret: str = HASHES_SECRET, servers: int = 3, storage: str = "100Gi"
) -> dict[str, Any]:
    references = {role: f"<< ${hash_variable(role)} >>" for role in ROLES}
    authorization = json.loads(render_server_config(references))["authorization"]
    return {
        "config": {
            "cluster": {"enabled": True, "replicas": servers},
            "jetstream": {
                "enabled": True,
                "fileStore": {"enabled": True, "pvc": {"enabled": True, "size": storage}},
            },
            "merge": {"authorization": authorization},
        },
        "container": {
            "env": {
                hash_variable(role): {
                    "valueFrom": {"secretKeyRef": {"name": hashes_secret, "key": role}}
                }
                for role in ROLES
            }
        },
        "podTemplate": {
            "topologySpreadConstraints": {
                "topology.kubernetes.io/zone": {
                    "maxSkew": 1,
                    "whenUnsatisfiable": "DoNotSchedule",
                }
            }
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hashes-secret", default=HASHES_SECRET, help="Secret of the hashes")
    parser.add_argument("--servers", type=int, default=3, help="NATS servers (cluster size)")
    parser.add_argument("--storage", default="100Gi", help="JetStream volume per server")
    args = parser.parse_args(argv)
    values = nats_values(args.hashes_secret, args.servers, args.storage)
    sys.stdout.write(yaml.safe_dump(values, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
