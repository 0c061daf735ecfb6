"""How the demo commands print the demo accounts."""

LABELS = {"admin": "Staff account:     ", "researcher": "Researcher account:"}


def account_lines(accounts: list[tuple[str, str | None]]) -> list[str]:
    lines = []
    for username, password in accounts:
        label = LABELS.get(username, f"{username}:")
        if password is None:
            lines.append(
                f"{label} {username} / (password changed since; "
                "`manage.py demo_accounts --reset` sets the demo password again)"
            )
        else:
            lines.append(f"{label} {username} / {password}")
    return lines
