from django.contrib import admin

from .models import Attempt, Delivery, Subscription


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["url", "owner", "created"]
    list_select_related = ["owner"]
    search_fields = ["url", "owner__username"]
    # The secret is never shown again, here neither; owners make subscriptions (the secret
    # is answered to them once), staff only look and delete.
    exclude = ["secret"]
    readonly_fields = [
        "owner",
        "public_id",
        "url",
        "description",
        "events",
        "secret_left_out",
        "created",
    ]

    def has_add_permission(self, request):
        return False


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0
    can_delete = False
    readonly_fields = ["number", "at", "outcome", "status_code", "latency_ms", "error"]


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = ["delivery", "number", "at", "outcome", "status_code", "latency_ms"]
    list_filter = ["outcome"]
    list_select_related = ["delivery__subscription"]
    search_fields = ["delivery__message_id", "delivery__subscription__url"]
    readonly_fields = ["delivery", "number", "at", "outcome", "status_code", "latency_ms", "error"]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["message_id", "event", "subscription", "status", "attempts", "created"]
    list_filter = ["status", "event"]
    list_select_related = ["subscription__owner"]
    search_fields = ["message_id", "subscription__url"]
    readonly_fields = [
        "subscription",
        "message_id",
        "event",
        "event_key",
        "body",
        "status",
        "attempts",
        "next_attempt_at",
        "created",
        "finished_at",
    ]
    inlines = [AttemptInline]
