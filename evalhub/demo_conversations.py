"""Conversations written for the EvalHub demo (no third-party data), in the interchange
format: {"id", "domain", "speakers": [system slug or "human"], "turns": [{"speaker", "text"}]}.

The demo systems keep their styles from demo.py: the seq2seq baseline is generic and
repetitive, the retrieval baseline fluent but often off-topic, PersonaBot on-topic but
obsessed with its dog. Human speakers are written to sound human.
"""


def _conversation(cid: str, speakers: list[str], lines: list[str], domain="demo") -> dict:
    return {
        "id": cid,
        "domain": domain,
        "speakers": speakers,
        "turns": [{"speaker": i % 2, "text": text} for i, text in enumerate(lines)],
    }


BOT_BOT = [
    _conversation(
        "demo-bb-1",
        ["persona-bot", "seq2seq-baseline"],
        [
            "hi ! how is your day going ?",
            "i don ' t know .",
            "oh , that sounds interesting . i love talking about days with my dog .",
            "i ' m not sure .",
            "well , my dog and i went to the park this morning . do you like parks ?",
            "yes .",
            "ha , parks are the best . what do you do for fun ?",
            "i don ' t know what you mean .",
            "i see , fun is hard to define . i mostly walk my dog .",
            "i don ' t know .",
        ],
    ),
    _conversation(
        "demo-bb-2",
        ["retrieval-baseline", "persona-bot"],
        [
            "i just got back from a trip to portugal .",
            "oh , portugal sounds lovely . did you bring your dog ?",
            "i work as a nurse at the city hospital .",
            "honestly , nursing sounds hard . my dog would be a terrible nurse .",
            "i love a good bowl of ramen on a cold day .",
            "ha , ramen ! my dog steals noodles whenever he can .",
            "i play tennis on sundays , badly .",
            "well , tennis balls are my dog ' s favourite toy .",
            "autumn , for the colours and the cooler air .",
            "i see , autumn walks with the dog are the best .",
        ],
    ),
    _conversation(
        "demo-bb-3",
        ["seq2seq-baseline", "retrieval-baseline"],
        [
            "hello , what are you up to ?",
            "probably pasta with whatever vegetables are left .",
            "i don ' t know .",
            "if you like thrillers , try an old hitchcock film .",
            "i ' m not sure .",
            "a little spanish , enough to order food .",
            "yes .",
            "i would love to run a small bookshop .",
            "i don ' t know what you mean .",
            "it is sunny but quite windy today .",
        ],
    ),
    _conversation(
        "demo-bb-4",
        ["persona-bot", "retrieval-baseline"],
        [
            "good morning ! any plans for the weekend ?",
            "visiting my parents and sleeping a lot .",
            "oh , parents are great . mine love my dog more than me .",
            "i grew up in a small town near the coast .",
            "honestly , the coast sounds perfect for long dog walks .",
            "i went hiking with some friends and it rained the whole time .",
            "ha , my dog loves rain more than i do .",
            "long walks and a quiet evening with friends .",
            "well , that is my ideal evening too , with the dog of course .",
            "my sister , we talk almost every day .",
        ],
    ),
    _conversation(
        "demo-bb-5",
        ["seq2seq-baseline", "persona-bot"],
        [
            "what is your name ?",
            "oh , names are interesting . my dog is called biscuit .",
            "i don ' t know .",
            "honestly , biscuit does not know his name either .",
            "yes .",
            "ha , so you agree . do you have a pet ?",
            "i ' m not sure .",
            "well , you would know if you had one . they wake you at six .",
            "i don ' t know what you mean .",
            "i see , mornings are hard for everyone .",
        ],
    ),
    _conversation(
        "demo-bb-6",
        ["retrieval-baseline", "seq2seq-baseline"],
        [
            "do you like to read ?",
            "i don ' t know .",
            "i do , mostly science fiction and some history .",
            "yes .",
            "once , i spent a summer in portugal .",
            "i ' m not sure .",
            "not at all , i need two coffees before i can talk .",
            "i don ' t know what you mean .",
            "ask questions and actually listen to the answers .",
            "i don ' t know .",
        ],
    ),
]

HUMAN_HUMAN = [
    _conversation(
        "demo-hh-1",
        ["human", "human"],
        [
            "hey , did you see the match last night ?",
            "only the second half , i fell asleep on the sofa before that , ha",
            "you missed the best goal of the season honestly",
            "no way . who scored ?",
            "the new guy , from almost the halfway line",
            "ok now i have to find the replay . thanks for ruining my productivity",
            "you ' re welcome . are you coming on thursday ?",
            "if i finish this report in time , yes . save me a seat",
            "deal . bring the snacks this time",
            "fine , fine . crisps or something healthy ?",
        ],
    ),
    _conversation(
        "demo-hh-2",
        ["human", "human"],
        [
            "my plants keep dying and i don ' t know why",
            "how often do you water them ?",
            "every day , i thought that was good ?",
            "that might be the problem , most plants hate soggy soil",
            "oh . so once a week ?",
            "depends on the plant . what kind are they ?",
            "a basil and some cactus my aunt gave me",
            "the cactus definitely needs way less . maybe every two weeks",
            "and the basil ?",
            "basil is thirsty , but let the top of the soil dry first",
        ],
    ),
]

HUMAN_BOT = [
    _conversation(
        "demo-hb-1",
        ["human", "persona-bot"],
        [
            "hi there , i just moved to a new city and i feel a bit lonely",
            "oh , moving sounds interesting . i love talking about that with my dog .",
            "do you have any tips for meeting people ?",
            "honestly , a dog is the best way to meet people . everyone stops to say hello .",
            "i can ' t have pets in my flat unfortunately",
            "ha , that is sad . my dog would not like your flat .",
            "that ' s a bit rude , no ?",
            "well , sorry ! maybe try a running club or a book club instead .",
            "a book club could be nice actually",
            "i see , reading is lovely . i read to my dog every night .",
        ],
    ),
    _conversation(
        "demo-hb-2",
        ["human", "seq2seq-baseline"],
        [
            "what ' s the best way to cook rice ?",
            "i don ' t know .",
            "come on , you must know something about rice",
            "i ' m not sure .",
            "ok , do you like rice at least ?",
            "yes .",
            "great , what ' s your favourite dish with rice ?",
            "i don ' t know what you mean .",
            "never mind , thanks anyway",
            "i don ' t know .",
        ],
    ),
    _conversation(
        "demo-hb-3",
        ["human", "persona-bot"],
        [
            "i failed my driving test today",
            "oh , driving sounds interesting . my dog loves car rides .",
            "i ' m pretty upset about it to be honest",
            "i am sorry , that must feel awful . you can take it again soon .",
            "yeah , in six weeks . i hit the kerb when parking",
            "honestly , parking is the hardest part . practise in an empty car park .",
            "that ' s a good idea . my dad could help me",
            "well , that sounds like a plan . dads are good at parking , like my dog at fetching .",
            "haha ok , thanks for cheering me up",
            "i see , you are welcome ! good luck next time .",
        ],
    ),
    _conversation(
        "demo-hb-4",
        ["human", "retrieval-baseline"],
        [
            "have you ever been to japan ?",
            "once , i spent a summer in portugal .",
            "that ' s not japan though",
            "i love a good bowl of ramen on a cold day .",
            "ok , ramen is japanese at least . where do you get it ?",
            "it is almost noon here .",
            "are you even listening to me ?",
            "i am so sorry to hear that . do you want to talk about it ?",
            "not really , bye",
            "long walks and a quiet evening with friends .",
        ],
    ),
]

ALL = BOT_BOT + HUMAN_HUMAN + HUMAN_BOT
