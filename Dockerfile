# The image that mars.deploy.kubernetes names by default: `make image` builds it as pymars:<version>.
# Every role runs from it: python -m mars.deploy.kubernetes.{supervisor,scheduler,web,worker} (docs/kubernetes.md).
FROM python:3.12-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /tmp/pymars
COPY pyproject.toml setup.py README.md ./
COPY mars ./mars
RUN pip install . && cd / && rm -rf /tmp/pymars

# nodes run as a user of their own: a token file or spill directory of one pod is nobody else's
RUN useradd --create-home --uid 1000 mars
USER 1000
WORKDIR /home/mars

# 7001 supervisor, 7003 worker, 7005 web (new_cluster and manifests()); 11111 KubeDL's MarsJob
EXPOSE 7001 7003 7005 11111

CMD ["python", "-m", "mars.deploy.kubernetes.supervisor"]
