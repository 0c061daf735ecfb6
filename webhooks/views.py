"""The owner's webhook pages, linked from the account page: the subscriptions (make one,
its secret shown once), and each one's delivery log with "Send a test event" and delete.
Only the owner sees a subscription; anybody else's id is answered 404."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from evalhub.errors import UserInputError, show_on_page

from .forms import SubscriptionForm
from .models import Attempt, Delivery
from .services import create_subscription, owned, send_test

LOG_PAGE = 25


def _owned_or_404(request, public_id):
    return get_object_or_404(owned(request.user), public_id=public_id)


@never_cache  # the page may show a new secret: no cache may keep it
@login_required
@require_http_methods(["GET", "POST"])
def subscription_list(request):
    form = SubscriptionForm(request.POST or None)
    new_secret, status = None, 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                made, new_secret = create_subscription(
                    request.user, data["url"], data["events"], data["description"]
                )
            except UserInputError as refused:
                show_on_page(request, refused, form)
            else:
                status = 200
                new_secret = {"secret": new_secret, "subscription": made}
                form = SubscriptionForm()
    context = {"subscriptions": owned(request.user), "form": form, "new_secret": new_secret}
    return render(request, "webhooks/subscription_list.html", context, status=status)


@login_required
@require_GET
def subscription_detail(request, public_id):
    subscription = _owned_or_404(request, public_id)
    deliveries = subscription.deliveries.prefetch_related(
        Prefetch("tries", queryset=Attempt.objects.order_by("number"))
    )
    page = Paginator(deliveries, LOG_PAGE).get_page(request.GET.get("page"))
    context = {"subscription": subscription, "page": page, "Status": Delivery.Status}
    return render(request, "webhooks/subscription_detail.html", context)


@login_required
@require_POST
def subscription_test(request, public_id):
    subscription = _owned_or_404(request, public_id)
    try:
        made = send_test(request.user, subscription)
    except UserInputError as refused:
        show_on_page(request, refused)
    else:
        made.refresh_from_db()
        if made.status == Delivery.Status.PENDING:
            messages.success(request, "A test event is on its way: see the log below.")
        else:
            messages.success(
                request, f"The test event was sent: {made.get_status_display().lower()}."
            )
    return redirect(subscription)


@login_required
@require_POST
def subscription_delete(request, public_id):
    subscription = _owned_or_404(request, public_id)
    url = subscription.url
    subscription.delete()
    messages.success(request, f"Deleted the subscription of {url}: nothing more is sent there.")
    return redirect("webhooks:list")
