"""Staff users with a role, logged in to a Django test client (the admin tests)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client


def staff(username: str, group: str | None = None, *, superuser: bool = False) -> tuple[Any, Client]:
    """A staff user in ``group`` (or a superuser) and a client logged in as them."""
    user = get_user_model().objects.create_user(username, password=f"pw-{username}-1", is_staff=True,
                                                is_superuser=superuser)  # fmt: skip
    if group:
        user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return user, client


def unchanged_form(client: Client, change_url: str) -> dict[str, Any]:
    """What an admin change page's form would post back unchanged (booleans as
    checkboxes: "on" when set, absent when not)."""
    page = client.get(change_url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {name: form.initial.get(name, field.initial) for name, field in form.fields.items()}
    return {k: ("on" if v is True else v) for k, v in data.items() if v is not None and v is not False}
