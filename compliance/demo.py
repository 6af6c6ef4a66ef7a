"""Demo data: the role groups and a compliance login."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from casino.demo import DemoLogins
from compliance.roles import COMPLIANCE, setup_roles

COMPLIANCE_USERNAME = "compliance"
COMPLIANCE_PASSWORD = "compliance-demo-password"


def seed_roles(logins: DemoLogins) -> list[str]:
    """Create the role groups and a staff login in the compliance group (once)."""
    setup_roles()
    user, created = get_user_model().objects.get_or_create(username=COMPLIANCE_USERNAME)
    if created:
        user.set_password(COMPLIANCE_PASSWORD)
        user.is_staff = True
        user.save()
    user.groups.add(Group.objects.get(name=COMPLIANCE))
    return [f"compliance login (read-only):  {COMPLIANCE_USERNAME} / {COMPLIANCE_PASSWORD}"]
