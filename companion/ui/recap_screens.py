"""After the game on screen: the explained scoreboard's bowls and QR code, the Past games
screen, and the recap picture. Layout in kv/history.kv and kv/scores.kv; data from
recap_models.py; the picture and the history come from companion.recap (services, not App).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Final

import numpy as np
from kivy.app import App
from kivy.graphics.texture import Texture
from kivy.metrics import dp
from kivy.properties import BooleanProperty, ListProperty, StringProperty
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.button import Button
from kivy.uix.label import Label
from kivy.uix.screenmanager import Screen

from companion.errors import CompanionError
from companion.recap.bgstats import create_play_link, qr_matrix
from companion.recap.crops import CropStore
from companion.recap.history import History, load_history, load_record
from companion.recap.record import GameRecord, record_from_view
from companion.tracking.gamelog import default_log_path
from companion.tracking.view import GameView
from companion.ui import recap_models as rm

KV_FILE: Final = "history.kv"


class ValueChip(Label):
    """A card as a small chip: its value on its ingredient's colour (not a touch target)."""

    bg = ListProperty([0.5, 0.5, 0.5, 1])


class BowlRow(BoxLayout):
    text = StringProperty("")
    good = BooleanProperty(False)


def _app() -> Any:
    return App.get_running_app()


def log_path(controller: Any) -> Path:
    """The game log the controller writes to (a Session knows it), else the default one."""
    path = getattr(controller, "log_path", None)
    return Path(path) if path else default_log_path()


def live_record(controller: Any, view: GameView) -> GameRecord:
    """The game on the table as a record, for the Scores screen (the log is marked finished
    only when the app closes)."""
    game = getattr(controller, "game_id", None)
    game_id = str(game() if callable(game) else game or "this-game")
    try:  # the log knows when it started and each turn: the recap's timeline
        record = load_record(log_path(controller), game_id)
        if record.finished:
            return record
    except CompanionError:
        pass
    return record_from_view(view, game_id, time.time() - view.t, time.time())


def qr_texture(link: str) -> Texture:
    """The link's QR code as a texture, one texel a module (drawn with nearest filtering)."""
    m = qr_matrix(link, border=3)
    grey = np.where(m, 0, 255).astype(np.uint8)[::-1]  # texture rows run bottom-up
    rgb = np.ascontiguousarray(np.dstack([grey, grey, grey]))
    tex = Texture.create(size=(m.shape[1], m.shape[0]), colorfmt="rgb")
    tex.blit_buffer(rgb.tobytes(), colorfmt="rgb", bufferfmt="ubyte")
    tex.mag_filter = "nearest"
    tex.min_filter = "nearest"
    return tex


def fill_explained(screen: Any, record: GameRecord, lang: str) -> None:
    """Per scorer their bowls as chips with types and points; the tie-break; solo's next star;
    the BG Stats QR code. `screen` is the ScoresScreen (ids from scores.kv)."""
    a = _app()
    model = rm.explained_scores(record, lang)
    screen.record = record
    screen.tie_text = model.tie
    screen.next_star_text = model.next_star
    box = screen.ids.explained
    box.clear_widgets()
    for block in model.blocks:
        head = Label(
            text=f"{block.name} · {block.total}",
            bold=True,
            font_size=a.scale * dp(17),
            color=(1, 0.85, 0.4, 1) if block.winner else (1, 1, 1, 1),
            size_hint_y=None,
            height=a.scale * dp(30),
            halign="left",
            valign="middle",
        )
        head.bind(size=lambda w, s: setattr(w, "text_size", s))
        box.add_widget(head)
        for bowl in block.bowls:
            row = BowlRow(text=bowl.text, good=bowl.points >= 5)
            for c in bowl.chips:
                row.ids.chips.add_widget(
                    ValueChip(text=c.card.rpartition("-")[2], bg=list(c.color), color=list(c.ink))
                )
            box.add_widget(row)
    if record.finished:
        link = create_play_link(record)
        screen.qr_link = link
        screen.ids.qr.texture = qr_texture(link)
    else:
        screen.qr_link = ""
        screen.ids.qr.texture = None


def recap_png(record: GameRecord, controller: Any, lang: str) -> Path:
    """Draw (once per game and language) the recap picture beside the game log."""
    from companion.recap.picture import render_recap, save_recap

    log = log_path(controller)
    folder = log.parent / f"{log.stem}-recaps"
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{record.id}-{lang}.png"
    save_recap(render_recap(record, CropStore.beside(log), lang), out)
    return out


class RecapScreen(Screen):
    """The recap picture, as it is saved (to send or to look at)."""

    source = StringProperty("")
    caption = StringProperty("")

    def show(self, record: GameRecord, controller: Any, lang: str) -> bool:
        from companion.ui.i18n import tr

        try:
            path = recap_png(record, controller, lang)
        except (OSError, CompanionError) as exc:
            self.source = ""
            self.caption = tr("history_error", lang, error=str(exc))
            return True
        self.source = str(path)
        self.ids.picture.reload()
        self.caption = tr("recap_saved", lang, path=path.name)
        return True

    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        """Nothing live here."""


class PastGamesScreen(Screen):
    """Every game of the log, newest first; a finished one opens its recap. A log that cannot
    be read shows why; a damaged game is a dimmed row, never a crash."""

    message = StringProperty("")
    solo_text = StringProperty("")
    history: History | None = None

    def on_pre_enter(self, *_: Any) -> None:
        self.load()

    def load(self) -> None:
        from companion.ui.i18n import tr

        a = _app()
        lang = a.lang
        self.history = None
        try:
            self.history = load_history(log_path(a.controller))
        except CompanionError as exc:
            text = str(exc)
            self.message = (
                tr("no_games", lang)
                if "no game log" in text
                else tr("history_error", lang, error=text)
            )
        self._render(lang)

    def _render(self, lang: str) -> None:
        from companion.ui.i18n import tr

        a = _app()
        games, players = self.ids.games, self.ids.players
        games.clear_widgets()
        players.clear_widgets()
        if self.history is None:
            return
        model = rm.history_model(self.history, lang)
        if not model.games:
            self.message = model.empty
        else:
            self.message = ""
        for row in model.games:
            text = f"{row.date} · {row.mode} · {row.players}\n{row.result}"
            b = Button(
                text=text,
                font_size=a.scale * dp(16),
                size_hint_y=None,
                height=a.scale * dp(60),
                background_normal="",
                background_color=(0.25, 0.27, 0.32, 1) if row.can_open else (0.16, 0.16, 0.19, 1),
                color=(1, 1, 1, 1) if row.can_open else (0.7, 0.6, 0.5, 1),
                halign="left",
                valign="middle",
                disabled=not row.can_open,
            )
            b.bind(size=lambda w, s: setattr(w, "text_size", (s[0] - dp(16), s[1])))
            b.game_id = row.id  # type: ignore[attr-defined]
            b.bind(on_press=lambda inst: self.open(inst.game_id))
            games.add_widget(b)
        heads = ("col_name", "col_games", "col_wins", "col_mean", "col_best_bowl")
        for key in heads:
            players.add_widget(self._cell(tr(key, lang), dim=True))
        for p in model.players:
            for text in (p.name, p.games, p.wins, p.mean, p.best_bowl):
                players.add_widget(self._cell(text, dim=False))
        self.solo_text = "\n".join(model.solo)

    def _cell(self, text: str, dim: bool) -> Label:
        a = _app()
        label = Label(
            text=text,
            font_size=a.scale * dp(15),
            color=(0.8, 0.82, 0.86, 1) if dim else (1, 1, 1, 1),
            halign="center",
            valign="middle",
            shorten=True,
            shorten_from="right",
        )
        label.bind(size=lambda w, s: setattr(w, "text_size", s))
        return label

    def open(self, game_id: str) -> None:
        if self.history is None:
            return
        a = _app()
        try:
            record = self.history.game(game_id)
        except CompanionError:
            return
        a.screen("recap").show(record, a.controller, a.lang)
        a.go("recap")

    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        """Nothing live here."""
