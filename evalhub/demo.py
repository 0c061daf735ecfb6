"""Demo catalog written for EvalHub (no third-party data): prompt sets, systems, responses.

The four demo systems answer in recognisably different styles, so that their automatic
metrics and, later, their human evaluations differ in a way a newcomer can see.
"""

import json

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.crypto import salted_hmac

from .models import NoticeKind, PromptSet, Submission, System
from .notifications import set_preferences
from .services import create_prompt_set, submit_responses

# (prompt, reference response); tokens are separated by spaces, as in ChatEval's sets.
DAILY_PROMPTS = [
    ("hi , how are you today ?", "i am doing well , thanks for asking . how about you ?"),
    ("what do you do for a living ?", "i work as a nurse at the city hospital ."),
    ("do you have any pets ?", "yes , i have two cats named salt and pepper ."),
    ("what is your favorite food ?", "i love a good bowl of ramen on a cold day ."),
    ("where did you grow up ?", "i grew up in a small town near the coast ."),
    (
        "what did you do last weekend ?",
        "i went hiking with some friends and it rained the whole time .",
    ),
    ("do you like to read ?", "i do , mostly science fiction and some history ."),
    ("what music do you listen to ?", "a bit of everything , but mostly jazz lately ."),
    ("are you a morning person ?", "not at all , i need two coffees before i can talk ."),
    ("what is the weather like there ?", "it is sunny but quite windy today ."),
    ("have you ever been abroad ?", "once , i spent a summer in portugal ."),
    ("what are you cooking tonight ?", "probably pasta with whatever vegetables are left ."),
    ("do you play any sports ?", "i play tennis on sundays , badly ."),
    ("what is your dream job ?", "i would love to run a small bookshop ."),
    ("can you recommend a movie ?", "if you like thrillers , try an old hitchcock film ."),
    ("how was your day ?", "long , but i finished a project i was proud of ."),
    ("what are your plans for the holidays ?", "visiting my parents and sleeping a lot ."),
    ("do you speak any other languages ?", "a little spanish , enough to order food ."),
    ("what makes you happy ?", "long walks and a quiet evening with friends ."),
    ("i just lost my job .", "i am so sorry to hear that . do you want to talk about it ?"),
    ("i got a new puppy !", "congratulations ! what breed is it ?"),
    ("my car broke down again .", "oh no , that is the worst . is it the same problem as before ?"),
    ("i am so tired today .", "did you not sleep well last night ?"),
    ("i passed my exam !", "well done ! you must be relieved ."),
    ("what time is it ?", "it is almost noon here ."),
    ("do you believe in ghosts ?", "not really , but i still avoid old houses at night ."),
    ("what is your favorite season ?", "autumn , for the colours and the cooler air ."),
    ("how do you relax ?", "i usually cook something slow and listen to podcasts ."),
    ("who is your best friend ?", "my sister , we talk almost every day ."),
    ("any advice for a first date ?", "ask questions and actually listen to the answers ."),
]

MULTI_TURN_PROMPTS = [
    [
        "i am thinking of learning to paint .",
        "that sounds fun ! oils or watercolours ?",
        "probably watercolours , they seem easier .",
    ],
    [
        "we are moving to a new city next month .",
        "exciting ! which city ?",
        "lisbon , for my partner 's new job .",
    ],
    [
        "my sister is getting married .",
        "congratulations to her ! are you in the wedding ?",
        "yes , i am giving a speech and i am nervous .",
    ],
    [
        "i started running last week .",
        "good for you ! how far do you go ?",
        "only two kilometres so far .",
    ],
    [
        "i cannot decide what to study .",
        "what subjects do you enjoy ?",
        "biology and drawing , strangely .",
    ],
    [
        "the neighbours are loud again .",
        "that is annoying . have you talked to them ?",
        "not yet , i do not want to start a fight .",
    ],
    [
        "i want to cook something special tonight .",
        "what is the occasion ?",
        "it is our anniversary .",
    ],
    ["my grandmother turned ninety .", "wow , that is wonderful ! how did you celebrate ?"],
    [
        "i have a job interview tomorrow .",
        "good luck ! what is the position ?",
        "junior data analyst at a bank .",
    ],
    ["i think i want to adopt a cat .", "cats are great company . have you had one before ?"],
    [
        "the train was late again this morning .",
        "that happens a lot lately , doesn't it ?",
        "every single day this week .",
    ],
    [
        "i finally finished reading that long novel .",
        "how was the ending ?",
        "sad , but it felt right .",
    ],
    ["we are planning a picnic on saturday .", "nice ! where are you going ?"],
    [
        "my laptop died in the middle of my essay .",
        "oh no ! did you lose your work ?",
        "about half of it , i think .",
    ],
    [
        "i have been learning the guitar .",
        "what songs can you play ?",
        "just a few chords so far .",
    ],
]

GENERIC = ["i don ' t know .", "i ' m not sure .", "yes .", "i don ' t know what you mean ."]


def seq2seq_response(prompt: str, i: int) -> str:
    return GENERIC[i % len(GENERIC)]


def retrieval_response(prompt: str, i: int) -> str:
    # A retrieval system answers with a fluent but often off-topic stored reply.
    pool = [ref for _, ref in DAILY_PROMPTS]
    return pool[(i * 7 + 3) % len(pool)]


def persona_response(prompt: str, i: int) -> str:
    last = prompt.split(" . ")[-1]
    openers = ["oh ,", "honestly ,", "ha ,", "well ,", "i see ,"]
    topic = " ".join(w for w in last.split() if len(w) > 3)[:40] or "that"
    return f"{openers[i % len(openers)]} {topic} sounds interesting . i love talking about that with my dog ."


def human_response(reference: str | None, prompt: str, i: int) -> str:
    return reference or f"that is a big deal ! tell me more about {prompt.split()[-2]} ."


def _txt(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def _ensure_prompt_sets(admin: User) -> list[PromptSet]:
    if not PromptSet.objects.filter(slug="demo-daily").exists():
        data = "\n".join(
            json.dumps({"id": str(n), "context": [p], "references": [r]})
            for n, (p, r) in enumerate(DAILY_PROMPTS, 1)
        )
        create_prompt_set(
            slug="demo-daily",
            name="Demo: everyday chit-chat",
            description="Thirty single-turn everyday prompts with one reference response each.",
            source="Written for the EvalHub demo",
            data=data.encode(),
            filename="demo-daily.jsonl",
            user=admin,
        )
    if not PromptSet.objects.filter(slug="demo-multi-turn").exists():
        data = "\n".join(
            json.dumps({"id": f"m{n}", "context": context})
            for n, context in enumerate(MULTI_TURN_PROMPTS, 1)
        )
        create_prompt_set(
            slug="demo-multi-turn",
            name="Demo: multi-turn contexts",
            description="Fifteen short conversations to continue; no references.",
            source="Written for the EvalHub demo",
            data=data.encode(),
            filename="demo-multi-turn.jsonl",
            user=admin,
        )
    return list(PromptSet.objects.filter(slug__in=["demo-daily", "demo-multi-turn"]))


DEMO_ACCOUNTS = {"admin": True, "researcher": False}  # username: staff


def demo_password(username: str) -> str:
    """The demo account's password: derived from this installation's SECRET_KEY, so that it
    can be printed again without being stored, and differs between installations."""
    return salted_hmac("evalhub.demo.accounts", username).hexdigest()[:16]


def _user(username: str, *, staff: bool) -> User:
    """The demo user; a password is set only when the account is created, so a password
    its owner changed (or a second `load_demo`) is never overwritten."""
    user, created = User.objects.get_or_create(
        username=username, defaults={"email": f"{username}@example.org"}
    )
    if created:
        user.set_password(demo_password(username))
    user.is_staff = user.is_superuser = staff
    user.save()
    if created:
        # Made-up addresses: the demo's own events (its submissions scored, its analyses
        # done) are told on the notices page, not as console emails.
        set_preferences(user, dict.fromkeys(NoticeKind.values, (True, False)))
    return user


def demo_accounts(*, reset: bool = False) -> list[tuple[str, str | None]]:
    """The demo accounts with their demo password, or None for an account whose password
    was changed since (or that does not exist). `reset` sets the demo passwords again."""
    accounts = []
    for username in DEMO_ACCOUNTS:
        user = User.objects.filter(username=username).first()
        if user is not None and reset:
            user.set_password(demo_password(username))
            user.save(update_fields=["password"])
        valid = user is not None and user.check_password(demo_password(username))
        accounts.append((username, demo_password(username) if valid else None))
    return accounts


SYSTEMS = [
    # slug, name, description, baseline, owner key, answer function
    (
        "seq2seq-baseline",
        "Seq2seq baseline",
        "An attention seq2seq model trained on movie subtitles: short, generic answers.",
        True,
        "admin",
        "seq2seq",
    ),
    (
        "retrieval-baseline",
        "Retrieval baseline",
        "Picks the best-scoring reply from a bank of human responses.",
        True,
        "admin",
        "retrieval",
    ),
    (
        "human-reference",
        "Human reference",
        "Responses written by people: the ceiling to compare against.",
        True,
        "admin",
        "human",
    ),
    (
        "persona-bot",
        "PersonaBot (demo researcher)",
        "A persona-grounded chatbot submitted by the demo researcher.",
        False,
        "researcher",
        "persona",
    ),
]


def answer(style: str, context: list[str], reference: str | None, i: int) -> str:
    prompt = " . ".join(context)
    if style == "seq2seq":
        return seq2seq_response(prompt, i)
    if style == "retrieval":
        return retrieval_response(prompt, i)
    if style == "human":
        return human_response(reference, prompt, i)
    return persona_response(prompt, i)


def load_catalog_demo() -> dict:
    """Create the demo catalog if it is missing; safe to run any number of times.

    Returns the demo accounts: ``{"admin", "researcher"}`` (``demo_accounts()`` tells their
    passwords). The other apps' demo parts (``demo.loader``) build on this catalog.
    """
    with transaction.atomic():
        admin = _user("admin", staff=DEMO_ACCOUNTS["admin"])
        researcher = _user("researcher", staff=DEMO_ACCOUNTS["researcher"])
        owners = {"admin": admin, "researcher": researcher}
        prompt_sets = _ensure_prompt_sets(admin)
        for slug, name, description, baseline, owner, style in SYSTEMS:
            system, _ = System.objects.get_or_create(
                slug=slug,
                defaults={
                    "name": name,
                    "description": description,
                    "is_baseline": baseline,
                    "owner": owners[owner],
                },
            )
            for prompt_set in prompt_sets:
                if Submission.objects.filter(system=system, prompt_set=prompt_set).exists():
                    continue
                prompts = list(prompt_set.prompts.order_by("position"))
                lines = [
                    answer(style, p.context, (p.references or [None])[0], i)
                    for i, p in enumerate(prompts)
                ]
                submit_responses(
                    system=system,
                    prompt_set=prompt_set,
                    data=_txt(lines),
                    filename=f"{slug}--{prompt_set.slug}.txt",
                    user=owners[owner],
                )
    return {"admin": admin, "researcher": researcher}
