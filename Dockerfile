# The production image: gunicorn for the web, the same image runs the Celery worker and beat.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
# Build-time values for collectstatic only (it reads no secret); the containers get the real
# ones from docker-compose.yml.
RUN DEBUG=0 SECRET_KEY=collectstatic-only \
    EVALHUB_SECRET_KEYS=Y29sbGVjdHN0YXRpYy1vbmx5LW5vdC1hLXNlY3JldC0= \
    python manage.py collectstatic --noinput
RUN useradd --create-home evalhub && mkdir -p /app/media && chown evalhub /app/media
USER evalhub
EXPOSE 8000
CMD ["gunicorn", "evalhub.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "8"]
