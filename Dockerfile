# Production image for web, worker and beat (one image, three commands in docker-compose.yml).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=config.settings_production

# gettext: compiled translations; libpango/libharfbuzz: WeasyPrint PDF export; curl: healthchecks.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gettext libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz0b fonts-dejavu-core curl \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
# collectstatic/compilemessages need settings but no secrets or database.
RUN DJANGO_SECRET_KEY=build-only-$(head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n') \
    python manage.py collectstatic --noinput -v 0 \
 && python manage.py compilemessages -v 0 \
 && useradd --system --uid 10001 app && chown -R app /app
USER app
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
