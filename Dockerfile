# syntax=docker/dockerfile:1.7
# One image for every opolyx service; a Deployment picks the entry point:
#   opolyx-table, opolyx-lobby, opolyx-bots, opolyx-progression, opolyx-gateway
# Build: docker build -t opolyx/opolyx:0.1.0 .
# The install steps are deploy/image/install.sh (tests/chart/test_image.py runs them).

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
# The uv release the Makefile bootstraps, so the image resolves exactly as development does.
RUN pip install --no-cache-dir "uv==0.13.9"
ENV UV_PROJECT_ENVIRONMENT=/opt/opolyx \
    UV_PYTHON_DOWNLOADS=never \
    UV_LINK_MODE=copy \
    PYTHON=/usr/local/bin/python3
WORKDIR /src
COPY deploy/image/install.sh deploy/image/install.sh
COPY pyproject.toml uv.lock ./
# Third-party packages first: this layer is reused until uv.lock changes.
RUN --mount=type=cache,target=/root/.cache/uv deploy/image/install.sh dependencies
COPY libs libs
COPY services services
RUN --mount=type=cache,target=/root/.cache/uv deploy/image/install.sh project

FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
# A fixed non-root uid/gid: the chart's securityContext runs as 10001.
RUN groupadd --system --gid 10001 opolyx \
    && useradd --system --uid 10001 --gid opolyx --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin opolyx
COPY --from=build /opt/opolyx /opt/opolyx
ENV PATH=/opt/opolyx/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    OPOLYX_HTTP__HOST=0.0.0.0
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000 8081
# The gateway unless the Deployment says otherwise (command: [opolyx-table], ...).
CMD ["opolyx-gateway"]
