#!/bin/sh
# The image's install steps, kept here so a test can run exactly what the Dockerfile runs
# (tests/chart/test_image.py) without a Docker engine.
#
#   install.sh dependencies   third-party packages only, from uv.lock (a layer that changes
#                             only when the lock does)
#   install.sh project        the workspace packages, as wheels (not editable: the runtime
#                             stage copies the environment without the sources)
#
# UV_PROJECT_ENVIRONMENT says where the environment goes. Only the services and the
# libraries they use are installed: no dev tools, no test harness.
set -eu

SERVICES="--package opolyx-table --package opolyx-lobby --package opolyx-bots \
--package opolyx-chat --package opolyx-progression --package opolyx-gateway"
SYNC="uv sync --frozen --no-dev --compile-bytecode --python ${PYTHON:-python3}"

case "${1:-}" in
    dependencies)
        # shellcheck disable=SC2086
        $SYNC --no-install-workspace $SERVICES
        # The image's additions (the OTLP trace exporter), kept beside the services' own.
        $SYNC --only-group image --inexact
        ;;
    project)
        # shellcheck disable=SC2086
        $SYNC --no-editable --inexact $SERVICES
        ;;
    *)
        echo "usage: install.sh dependencies|project" >&2
        exit 2
        ;;
esac
