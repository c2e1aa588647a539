"""The demo chat and world info: a SillyTavern chat JSONL and a small lorebook.

The demo workspace (`Workbench()`) gets them as `data/chat.jsonl` and `data/lore.json`; `data/`
is not a visible root, so the model reaches them only through the chat and world-info tools,
as a TauriTavern run reaches its chat. `Workbench.demo()` loads both (from the texts here, so
any workspace works). With the default scan depth of 2, messages #10 and #11 are scanned.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..tools.chat_history import parse_chat
from ..tools.worldinfo_book import parse_worldinfo

if TYPE_CHECKING:
    from .kernel import Kernel

CHAT_PATH = "data/chat.jsonl"
LORE_PATH = "data/lore.json"
_NARRATOR, _USER = "Narrator", "Ada"


def _message(name: str, text: str, *, is_user: bool = False, is_system: bool = False) -> dict[str, Any]:
    return {"name": name, "is_user": is_user, "is_system": is_system, "send_date": "2025-01-05T19:00:00.000Z",
            "mes": text, "extra": {}}


_HEADER = {"user_name": _USER, "character_name": _NARRATOR, "create_date": "2025-01-05@19h00m00s",
           "chat_metadata": {"note_prompt": ""}}
_MESSAGES = [
    _message(_NARRATOR, "Rain drums on the shutters of the Gilded Goose. The common room smells of wet wool.\n"
                        "The innkeeper, a broad man named Tobin, waves you over to the fire."),
    _message(_USER, "I sit by the fire and ask Tobin about the 12 gold he owes us.", is_user=True),
    _message(_NARRATOR, "Tobin rubs his neck. \"Twelve gold, aye. You'll have it after market day.\"\n"
                        "He slides a mug of cider across the table instead.\n"
                        "Brom grumbles, but he takes the mug."),
    _message(_USER, "Fine. What news from the road?", is_user=True),
    _message(_NARRATOR, "Tobin lowers his voice.\n"
                        "\"Shepherds lost six sheep on the hill last week. No wolves took them.\"\n"
                        "\"The grass up there is scorched in long stripes, like something dragged a torch.\"\n"
                        "\"Old Marta swears she saw smoke rise from the caves at night.\"\n"
                        "\"The reeve says it is charcoal burners. The reeve has not been up there.\"\n"
                        "He glances at the door, then back at you.\n"
                        "\"If you go, go at first light, and take more rope than you think you need.\""),
    _message("System", "[Ada rolled 1d20 for Insight: 17. Tobin is telling the truth.]", is_system=True),
    _message(_USER, "We should buy rope and lamp oil at the market at dawn.", is_user=True),
    _message(_NARRATOR, "At dawn the market is loud with gulls and hawkers.\n"
                        "You buy fifty feet of rope for 2 silver and a flask of lamp oil for 1."),
    _message(_USER, "Brom, how is your axe?", is_user=True),
    _message(_NARRATOR, "Brom tests the edge with his thumb. \"Sharp enough for anything with scales.\""),
    _message(_USER, "We climb the Northern Hill before noon. Brom, keep your axe ready.", is_user=True),
    _message(_NARRATOR, "Halfway up the northern hill the heather is burnt black.\n"
                        "A low rumble rolls out of a cave mouth: the breath of a sleeping dragon.\n"
                        "Brom grips his axe. Ada counts the coils of rope."),
]
CHAT_JSONL = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in [_HEADER, *_MESSAGES])


def _entry(uid: int, comment: str, keys: list[str], content: str, **fields: Any) -> dict[str, Any]:
    return {"uid": uid, "key": keys, "keysecondary": [], "comment": comment, "content": content,
            "constant": False, "selective": True, "selectiveLogic": 0, "order": 100, "position": 0,
            "disable": False, "probability": 100, "useProbability": True, "depth": 4, "scanDepth": None,
            "caseSensitive": None, "matchWholeWords": None, **fields}


LORE = {"entries": {str(e["uid"]): e for e in [
    _entry(0, "The realm", [], "Eldoria is a cold northern realm of hills, sheep and slate roofs.\n"
           "Magic is rare and feared; dragons are remembered only in songs.", constant=True, order=10),
    _entry(1, "The sleeping dragon", ["dragon", "wyrm"],
           "An old red dragon sleeps in the caves under the northern hill.\n"
           "It wakes for a few nights each spring and hunts sheep.\n"
           "It hates the smell of lamp oil.\n"
           "It will bargain before it fights, and it always keeps a bargain."),
    _entry(2, "The Gilded Goose", ["inn", "innkeeper"],
           "The Gilded Goose is the only inn of the valley. Tobin keeps it and owes the party 12 gold.",
           matchWholeWords=True),
    _entry(3, "The dawn market", ["market"], "Stalls open at dawn and close by noon; rope is 2 silver.",
           keysecondary=["dawn"], selectiveLogic=0),
    _entry(4, "An old prophecy (draft)", ["dragon"], "Unfinished: do not use.", disable=True),
    _entry(5, "Brom's axe", ["axe"], "Brom's axe is dwarf-forged and never dulls.\nIt was his father's.",
           keysecondary=["broken"], selectiveLogic=2),
    _entry(6, "The northern hill", ["/north(ern)? hill/i"],
           "The northern hill is steep heather over slate, riddled with caves.", order=50),
]}}
LORE_JSON = json.dumps(LORE, ensure_ascii=False, indent=2) + "\n"

DEMO_CHAT_FILES: dict[str, str] = {CHAT_PATH: CHAT_JSONL, LORE_PATH: LORE_JSON}


def load_demo_history(kernel: Kernel) -> None:
    """Load the demo chat and lorebook as a bench's run inputs (what `Workbench.demo()` does)."""
    kernel.set_chat(parse_chat(CHAT_JSONL, source=f"<demo>/{CHAT_PATH}"))
    kernel.add_worldinfo(parse_worldinfo(LORE, name="lore", source=f"<demo>/{LORE_PATH}"))
