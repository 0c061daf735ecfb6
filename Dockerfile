# The production image: gunicorn for the web, the same image runs the Celery worker and beat.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
RUN useradd --create-home evalhub && mkdir -p /app/media && chown evalhub /app/media
USER evalhub
EXPOSE 8000
CMD ["gunicorn", "evalhub.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "8"]
