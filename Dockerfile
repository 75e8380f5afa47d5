# syntax=docker/dockerfile:1
# Spreadgate image: the wheel, installed into a slim Python, run as the non-root uid the
# manifests expect (65532). Build and push: see README, "Deploying to a cluster".
#
#   docker build -t registry.example.com/spreadgate:0.1.0 .
#
# Stage 1 builds the wheel exactly as tests/packaging does (`pip wheel`, then the same
# non-editable install), plus wheels of every dependency, so the final stage needs no
# compiler and no network.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY . .
RUN pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# The wheels are mounted for the install only, so no layer of the final image keeps them.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels spreadgate \
    && pip uninstall -y pip setuptools wheel \
    && rm -rf /root/.cache
USER 65532:65532
ENTRYPOINT ["spreadgate"]
CMD ["--help"]
