"""Every string of the web client is in English and in French (issue 38): each area
registers its table in ``client/static/client/js/i18n/<area>.js``; loaded together
in a real browser, ``missing()`` of ``js/i18n.js`` names every key one language
has and the other lacks, and must name none. Whatever files exist are loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from tests.compliance.browser import needs_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, needs_browser]

I18N = Path(settings.BASE_DIR) / "client" / "static" / "client" / "js" / "i18n"


def test_every_client_string_is_in_english_and_french(
    live_server,
    browser,
) -> None:
    files = sorted(path.name for path in I18N.glob("*.js"))
    assert {"shell.js", "account.js"} <= set(files)
    browser.set_script_timeout(20)
    browser.get(f"{live_server.url}/")
    answer = browser.execute_async_script(
        """
        const [files, done] = arguments;
        Promise.all(files.map((name) => import(`/static/client/js/i18n/${name}`)))
          .then(() => import('/static/client/js/i18n.js'))
          .then((i18n) => {
            const keys = (lang) => { i18n.setLanguage(lang); return i18n.t('account.title'); };
            done({ missing: i18n.missing(), en: keys('en'), fr: keys('fr') });
          }, (error) => done({ error: String(error) }));
        """,
        files,
    )
    assert "error" not in answer, answer
    assert answer["missing"] == []
    # The tables were loaded (a key of each language answers its own text, not the key).
    assert (answer["en"], answer["fr"]) == ("My account", "Mon compte")
