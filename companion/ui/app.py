"""The Kivy app: screens that copy view-model data into widgets, and the poll loop.

Layout lives in `kv/<screen>.kv`; what is shown comes from `viewmodels.py`. The app reads the
controller on the UI thread with `Clock.schedule_interval` (8 Hz): `view()` and
`latest_frame()` return snapshots at once, so a touch is never queued behind a frame.
Import this module only where a window may open (it imports Kivy).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

os.environ.setdefault("KIVY_NO_ARGS", "1")

import numpy as np
from kivy.animation import Animation
from kivy.app import App
from kivy.clock import Clock
from kivy.core.window import Window
from kivy.factory import Factory
from kivy.graphics import Color, Line, Rectangle
from kivy.graphics.texture import Texture
from kivy.lang import Builder
from kivy.metrics import dp
from kivy.properties import (
    BooleanProperty,
    ListProperty,
    NumericProperty,
    ObjectProperty,
    StringProperty,
)
from kivy.uix.behaviors import ButtonBehavior
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.button import Button
from kivy.uix.label import Label
from kivy.uix.screenmanager import NoTransition, Screen, ScreenManager
from kivy.uix.widget import Widget

from companion.cards import INGREDIENTS
from companion.tracking.view import GameView
from companion.ui import viewmodels as vm
from companion.ui.controller import Controller, Settings
from companion.ui.i18n import LANGUAGES, ingredient_name, tr
from companion.ui.recap_screens import (
    PastGamesScreen,
    RecapScreen,
    fill_explained,
    live_record,
)
from companion.ui.settings_store import SettingsStore
from companion.ui.sound import Speaker

KV_DIR: Final = Path(__file__).parent / "kv"
KV_FILES: Final = (
    "widgets.kv",
    "newgame.kv",
    "table.kv",
    "corrections.kv",
    "endgame.kv",
    "scores.kv",
    "settings.kv",
    "history.kv",
)
POLL_HZ: Final = 8.0
ERROR_EXIT_S: Final = 20.0
"""When the pipeline stops on an error, the screen shows why this long, then the app closes
(`companion run` exits non-zero and systemd restarts the kiosk into the unfinished game)."""
SCORE_CONFIRM_S: Final = 4.0
"""The Score button asks "Score?" and waits this long for the confirming tap."""
BASE_SIZE: Final = (800, 480)
REGION_RGBA: Final[dict[str, tuple[float, float, float, float]]] = {
    "fridge": (0.34, 0.70, 0.91, 1),
    "bowl-1": (0.45, 1.0, 0.7, 1),
    "bowl-2": (0.45, 1.0, 0.7, 1),
    "bowl-3": (0.45, 1.0, 0.7, 1),
    "scan": (0.94, 0.89, 0.26, 1),
}


# -- widgets ---------------------------------------------------------------------------------
class CardChip(ButtonBehavior, Label):
    """A card as a coloured chip; tapping it opens the correction picker."""

    card = StringProperty("")
    bg = ListProperty([0.5, 0.5, 0.5, 1])


class Meter(Widget):
    caption = StringProperty("")
    value = StringProperty("")
    fraction = NumericProperty(0.0)


class BowlPanelWidget(BoxLayout):
    region = StringProperty("")
    title = StringProperty("")
    sum_text = StringProperty("")
    types_text = StringProperty("")
    sum_fraction = NumericProperty(0.0)
    types_fraction = NumericProperty(0.0)
    ready = BooleanProperty(False)
    _shown: tuple[vm.CardChip, ...] | None = None

    def show(self, panel: vm.BowlPanel, on_card: Any) -> None:
        self.region = panel.region
        self.title = panel.title
        self.sum_text = panel.sum_text
        self.types_text = panel.types_text
        self.sum_fraction = panel.sum_fraction
        self.types_fraction = panel.types_fraction
        self.ready = panel.ready
        if panel.chips != self._shown:
            self._shown = panel.chips
            fill_chips(self.ids.chips, panel.chips, on_card)


class Toast(Label):
    pass


class CameraView(Widget):
    """The camera picture (BGR ndarray -> texture, aspect kept) with card outlines on top."""

    texture = ObjectProperty(None, allownone=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._boxes: list[tuple[tuple[float, float, float, float], str]] = []
        self._scale = 1.0
        self.bind(pos=self._redraw, size=self._redraw)

    def show(self, frame: np.ndarray | None, view: GameView | None, scale: float) -> None:
        if frame is not None and frame.ndim == 3 and frame.shape[2] == 3:
            h, w = frame.shape[:2]
            if self.texture is None or tuple(self.texture.size) != (w, h):
                self.texture = Texture.create(size=(w, h), colorfmt="rgb")
            rgb = np.ascontiguousarray(frame[::-1, :, ::-1])  # BGR top-down -> RGB bottom-up
            self.texture.blit_buffer(rgb.tobytes(), colorfmt="rgb", bufferfmt="ubyte")
        self._boxes = [(s.box, s.region) for s in (view.seen if view else ()) if s.box]
        self._scale = scale
        self._redraw()

    def picture_rect(self) -> tuple[float, float, float, float]:
        """(x, y, w, h) of the picture inside the widget, aspect ratio kept."""
        if self.texture is None:
            return (self.x, self.y, self.width, self.height)
        tw, th = self.texture.size
        k = min(self.width / tw, self.height / th) if tw and th else 1.0
        w, h = tw * k, th * k
        return (self.x + (self.width - w) / 2, self.y + (self.height - h) / 2, w, h)

    def _redraw(self, *_: Any) -> None:
        self.canvas.clear()
        if self.texture is None:
            return
        x, y, w, h = self.picture_rect()
        k = w / self.texture.width * self._scale
        with self.canvas:
            Color(1, 1, 1, 1)
            Rectangle(texture=self.texture, pos=(x, y), size=(w, h))
            for (x1, y1, x2, y2), region in self._boxes:
                Color(*REGION_RGBA.get(region, (0.8, 0.8, 0.8, 1)))
                Line(
                    rectangle=(x + x1 * k, y + h - y2 * k, (x2 - x1) * k, (y2 - y1) * k),
                    width=dp(1.5),
                )


def fill_chips(box: Widget, chips: tuple[vm.CardChip, ...], on_card: Any) -> None:
    box.clear_widgets()
    for c in chips:
        w = CardChip(text=c.label, card=c.card, bg=list(c.color), color=list(c.ink))
        if on_card is not None:
            w.bind(on_press=lambda inst: on_card(inst.card))
        box.add_widget(w)


def app() -> CompanionApp:
    running = App.get_running_app()
    assert isinstance(running, CompanionApp)
    return running


# -- screens ---------------------------------------------------------------------------------
class BaseScreen(Screen):
    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        """Called at each poll while the screen is shown."""


class NewGameScreen(BaseScreen):
    mode = StringProperty("2p")
    source = StringProperty("")
    check_text = StringProperty("")
    check_ok = BooleanProperty(False)

    def on_pre_enter(self, *_: Any) -> None:
        self.source = app().settings.source
        self._build_names()

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self._build_names()

    def _build_names(self) -> None:
        grid = self.ids.names
        typed = [w.text for w in reversed(grid.children)] if grid.children else []
        grid.clear_widgets()
        lang = app().lang
        for i, default in enumerate(vm.default_names(self.mode, lang)):
            field = Factory.Field(text=typed[i] if i < len(typed) else "", hint_text=default)
            grid.add_widget(field)

    def typed_names(self) -> list[str]:
        return [w.text for w in reversed(self.ids.names.children)]

    def on_start(self) -> None:
        a = app()
        names = vm.player_names(self.mode, self.typed_names(), a.lang)
        a.controller.new_game(self.mode, names, a.lang, a.settings.source)
        a.announcer.reset()
        a.go("table")

    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        a = app()
        self.ids.camera.show(frame, view, a.controller.frame_scale())
        self.check_ok = frame is not None and view.camera == "ok" and not view.error
        self.check_text = (
            vm.camera_text(view.camera, a.lang, view.error)
            if frame is not None or view.error
            else tr("cam_no_frame", a.lang)
        )


class TableScreen(BaseScreen):
    turn_text = StringProperty("")
    camera_text = StringProperty("")
    camera_ok = BooleanProperty(True)
    banner_text = StringProperty("")
    banner_dismissed = BooleanProperty(False)
    score_armed = BooleanProperty(False)
    model: vm.TableModel | None = None
    _fridge_shown: tuple[vm.CardChip, ...] | None = None
    _served_shown: tuple[vm.ServedRow, ...] | None = None

    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        a = app()
        model = vm.table_model(view, a.lang)
        self.model = model
        self.turn_text = model.turn_text
        self.camera_text = model.camera_text
        self.camera_ok = model.camera_ok
        if model.banner_text != self.banner_text:
            self.banner_dismissed = False
        self.banner_text = model.banner_text
        self.ids.camera.show(frame, view, a.controller.frame_scale())
        panels = self.ids.bowls
        while len(panels.children) > len(model.bowls):
            panels.remove_widget(panels.children[0])
        while len(panels.children) < len(model.bowls):
            panels.add_widget(BowlPanelWidget())
        for widget, panel in zip(reversed(panels.children), model.bowls, strict=True):
            widget.show(panel, a.open_card_fix)
        if model.fridge != self._fridge_shown:
            self._fridge_shown = model.fridge
            fill_chips(self.ids.fridge, model.fridge, a.open_card_fix)
        if model.served != self._served_shown:
            self._served_shown = model.served
            box = self.ids.served
            box.clear_widgets()
            for row in model.served:
                b = Button(
                    text=row.text,
                    font_size=a.scale * dp(18),
                    background_normal="",
                    background_color=(0.25, 0.27, 0.32, 1),
                    halign="center",
                    valign="middle",
                )
                b.bind(size=lambda w, s: setattr(w, "text_size", s))
                b.scorer = row.scorer  # type: ignore[attr-defined]
                b.bind(on_press=lambda inst: a.open_served(inst.scorer))
                box.add_widget(b)

    def on_touch_down(self, touch: Any) -> bool:
        banner = self.ids.banner
        if banner.opacity and banner.collide_point(*touch.pos):
            self.banner_dismissed = True
            return True
        return bool(super().on_touch_down(touch))

    def on_undo(self) -> None:
        app().controller.undo()

    def on_score(self) -> None:
        """Two taps (the second within a few seconds): a stray touch must not end the game."""
        if not self.score_armed:
            self.score_armed = True
            Clock.schedule_once(self._disarm, SCORE_CONFIRM_S)
            return
        self.score_armed = False
        app().start_scoring()

    def _disarm(self, _dt: float) -> None:
        self.score_armed = False

    def toast(self, text: str) -> None:
        area = self.ids.toast_area
        area.clear_widgets()
        label = Toast(text=text)
        area.add_widget(label)
        anim = (
            Animation(opacity=1, duration=0.2)
            + Animation(duration=4)
            + Animation(opacity=0, duration=1.0)
        )
        label.opacity = 0
        anim.bind(on_complete=lambda *_: area.remove_widget(label))
        anim.start(label)


class CorrectionsScreen(BaseScreen):
    title = StringProperty("")
    prompt = StringProperty("")
    fix: vm.CardFix | None = None
    item: vm.ServedItem | None = None

    def open_card(self, card_id: str) -> None:
        self.fix = vm.CardFix(card_id)
        self.item = None
        self._render_fix()

    def open_served(self, scorer: str | None) -> None:
        self.fix = None
        self.item = None
        self.title = tr("give_bowl", app().lang)
        self._render_served(scorer)

    def _render_fix(self) -> None:
        a = app()
        fix = self.fix
        assert fix is not None
        self.title = fix.title(a.lang)
        self.prompt = fix.prompt(a.lang)
        grid = self.ids.choices
        grid.clear_widgets()
        grid.cols, grid.row_force_default = 4, False
        self.ids.targets.clear_widgets()
        if fix.ingredient is None:
            for ing in INGREDIENTS:
                rgba = vm.ingredient_rgba(ing)
                b = Button(
                    text=ingredient_name(ing, a.lang),
                    font_size=a.scale * dp(22),
                    bold=True,
                    background_normal="",
                    background_color=rgba,
                    color=vm.ink_on(rgba),
                )
                b.ingredient = ing  # type: ignore[attr-defined]
                b.bind(on_press=lambda inst: self.pick_ingredient(inst.ingredient))
                grid.add_widget(b)
        else:
            rgba = vm.ingredient_rgba(fix.ingredient)
            for v in range(8):
                b = Button(
                    text=str(v),
                    font_size=a.scale * dp(34),
                    bold=True,
                    background_normal="",
                    background_color=rgba,
                    color=vm.ink_on(rgba),
                )
                b.value = v  # type: ignore[attr-defined]
                b.bind(on_press=lambda inst: self.pick_value(inst.value))
                grid.add_widget(b)

    def pick_ingredient(self, ingredient: str) -> None:
        if self.fix is not None:
            self.fix.pick_ingredient(ingredient)
            self._render_fix()

    def pick_value(self, value: int) -> None:
        if self.fix is not None:
            self.fix.pick_value(value, app().controller)
            self.close()

    def _render_served(self, scorer: str | None) -> None:
        a = app()
        view = a.controller.view()
        items = vm.served_items(view, a.lang)
        grid = self.ids.choices
        grid.clear_widgets()
        grid.cols, grid.row_force_default = 2, True
        grid.row_default_height = a.scale * dp(56)
        self.ids.targets.clear_widgets()
        self.prompt = (
            tr("give_to", a.lang, n=self.item.index + 1) if self.item else tr("give_bowl", a.lang)
        )
        for item in items:
            if scorer is not None and item.scorer != scorer and self.item is None:
                continue
            b = Button(
                text=item.text,
                font_size=a.scale * dp(18),
                background_normal="",
                background_color=(0.0, 0.62, 0.45, 1)
                if self.item and item.index == self.item.index
                else (0.25, 0.27, 0.32, 1),
                halign="center",
                valign="middle",
            )
            b.bind(size=lambda w, s: setattr(w, "text_size", s))
            b.item = item  # type: ignore[attr-defined]
            b.bind(on_press=lambda inst: self.pick_item(inst.item))
            grid.add_widget(b)
        if self.item is not None:
            for s in view.scorers:
                b = Button(
                    text=vm.scorer_label(s, view.mode, a.lang),
                    font_size=a.scale * dp(20),
                    bold=True,
                    size_hint_y=None,
                    height=a.scale * dp(60),
                    background_normal="",
                    background_color=(0.34, 0.55, 0.85, 1),
                )
                b.scorer = s  # type: ignore[attr-defined]
                b.bind(on_press=lambda inst: self.pick_scorer(inst.scorer))
                self.ids.targets.add_widget(b)

    def pick_item(self, item: vm.ServedItem) -> None:
        self.item = item
        self._render_served(None)

    def pick_scorer(self, scorer: str) -> None:
        if self.item is not None:
            vm.reassign(app().controller, self.item, scorer)
            self.close()

    def on_undo(self) -> None:
        app().controller.undo()
        self.close()

    def close(self) -> None:
        self.fix = None
        self.item = None
        app().go_back()


class EndGameScreen(BaseScreen):
    guide_text = StringProperty("")
    progress_text = StringProperty("")
    pile_line = StringProperty("")
    check_text = StringProperty("")
    check_ok = BooleanProperty(True)
    confirm_text = StringProperty("")
    can_confirm = BooleanProperty(False)
    can_use_seen = BooleanProperty(False)
    last_scorer = BooleanProperty(False)
    flow: vm.EndGame | None = None
    scan: tuple[str, ...] = ()
    _chips: tuple[vm.CardChip, ...] | None = None

    def start(self, view: GameView) -> None:
        self.flow = vm.EndGame(view)
        self._chips = None

    def refresh(self, view: GameView, frame: np.ndarray | None) -> None:
        a = app()
        if self.flow is None:
            self.start(view)
        flow = self.flow
        assert flow is not None
        self.ids.camera.show(frame, view, a.controller.frame_scale())
        self.scan = view.scan
        read = flow.read(view.scan, a.lang)
        self.guide_text = flow.guide(a.lang)
        self.progress_text = flow.progress(a.lang)
        self.pile_line = read.line
        self.check_text = "\n".join(read.check_lines)
        self.check_ok = read.check.status != "differs"
        fresh = bool(view.scan) and not flow.already_confirmed(view.scan)
        self.can_confirm = fresh
        self.can_use_seen = fresh and read.check.status == "differs" and bool(read.check.seen)
        self.confirm_text = tr(
            "keep_read" if read.check.status == "differs" else "next_pile", a.lang
        )
        self.last_scorer = flow.position >= len(flow.scorers) - 1
        if read.chips != self._chips:
            self._chips = read.chips
            fill_chips(self.ids.read, read.chips, a.open_card_fix)

    def on_confirm(self) -> None:
        if self.flow is not None:
            self.flow.confirm(app().controller, self.scan)

    def on_use_seen(self) -> None:
        if self.flow is not None:
            self.flow.use_seen(app().controller, self.scan)

    def on_next(self) -> None:
        flow = self.flow
        if flow is None:
            return
        flow.next_scorer()
        if flow.done:
            app().show_scores(flow)


class ScoresScreen(BaseScreen):
    result_text = StringProperty("")
    tie_text = StringProperty("")
    stars_text = StringProperty("")
    review_text = StringProperty("")
    notes_text = StringProperty("")
    """Piles read at the end that differ in number from the bowls seen served."""
    next_star_text = StringProperty("")
    qr_link = StringProperty("")
    """The BG Stats createPlay link of the game (empty until it is finished)."""
    board: vm.Scoreboard | None = None
    record: Any = None
    """The game as a recap.record.GameRecord: every bowl under its scorer."""

    def explain(self, record: Any, lang: str) -> None:
        """Each scorer's bowls, the tie-break that decided, the next star, the QR code."""
        fill_explained(self, record, lang)

    def show(self, board: vm.Scoreboard, lang: str, notes: tuple[str, ...] = ()) -> None:
        self.board = board
        self.notes_text = "\n".join(notes)
        self.result_text = board.result
        self.tie_text = board.tie_text
        self.stars_text = board.stars
        self.review_text = board.review
        grid = self.ids.rows
        grid.clear_widgets()
        heads = ("col_name", "col_points", "col_bowls", "col_cards")
        for key in heads:
            grid.add_widget(self._cell(tr(key, lang), bold=True, dim=True))
        for row in board.rows:
            for text in (row.name, str(row.points), str(row.bowls), str(row.cards)):
                grid.add_widget(self._cell(text, bold=row.winner, dim=False, win=row.winner))

    def _cell(self, text: str, bold: bool, dim: bool, win: bool = False) -> Label:
        a = app()
        label = Label(
            text=text,
            bold=bold,
            font_size=a.scale * dp(20),
            color=(0.8, 0.82, 0.86, 1) if dim else ((1, 0.85, 0.4, 1) if win else (1, 1, 1, 1)),
            halign="center",
            valign="middle",
        )
        label.bind(size=lambda w, s: setattr(w, "text_size", s))
        return label


class SettingsScreen(BaseScreen):
    source = StringProperty("")
    language = StringProperty("en")
    sound = BooleanProperty(True)
    voice = BooleanProperty(False)
    calibration_view = BooleanProperty(False)
    fullscreen = BooleanProperty(False)
    hide_cursor = BooleanProperty(False)

    def on_pre_enter(self, *_: Any) -> None:
        s = app().settings
        self.source = s.source
        self.language = s.language
        self.sound = s.sound
        self.voice = s.voice
        self.calibration_view = s.calibration_view
        self.fullscreen = s.fullscreen
        self.hide_cursor = s.hide_cursor
        for key in ("sound", "voice", "calibration", "fullscreen", "hide_cursor"):
            row = self.ids[key]
            row.ids.toggle.state = "down" if row.value else "normal"

    def collect(self) -> Settings:
        def on(key: str) -> bool:
            return bool(self.ids[key].ids.toggle.state == "down")

        return Settings(
            source=self.ids.source.text.strip() or self.source,
            language=self.language,
            sound=on("sound"),
            voice=on("voice"),
            calibration_view=on("calibration"),
            fullscreen=on("fullscreen"),
            hide_cursor=on("hide_cursor"),
        )

    def on_apply(self) -> None:
        app().apply_settings(self.collect())
        app().go_back()


# -- the app ---------------------------------------------------------------------------------
class CompanionApp(App):
    """Holds the controller, the settings, the announcer; switches screens; polls."""

    lang = StringProperty("en")
    scale = NumericProperty(1.0)

    def __init__(
        self,
        controller: Controller,
        settings: Settings,
        store: SettingsStore | None = None,
        start: str = "new",
        **kwargs: Any,
    ) -> None:
        """`store` keeps the settings between runs (saved on Apply); `start` is the first
        screen (`table` for a resumed game)."""
        super().__init__(**kwargs)
        self.controller = controller
        self.settings = settings
        self.store = store
        self.start = start
        self._error_shown: str | None = None
        self.lang = settings.language
        self.announcer = vm.Announcer()
        self.speaker = Speaker(sound=settings.sound, voice=settings.voice)
        self.sm: ScreenManager | None = None
        self.history: list[str] = []
        self.last_view: GameView | None = None
        self.last_phase = ""
        self.title = tr("app_title", self.lang)

    def t(self, key: str, lang: str, **fields: object) -> str:
        """kv helper: `app.t('start', app.lang)` re-evaluates when the language changes."""
        return tr(key, lang, **fields)

    def build(self) -> ScreenManager:
        for name in KV_FILES:
            Builder.load_file(str(KV_DIR / name))
        sm = ScreenManager(transition=NoTransition())
        for screen in (
            NewGameScreen(name="new"),
            TableScreen(name="table"),
            CorrectionsScreen(name="fix"),
            EndGameScreen(name="end"),
            ScoresScreen(name="scores"),
            SettingsScreen(name="settings"),
            PastGamesScreen(name="history"),
            RecapScreen(name="recap"),
        ):
            sm.add_widget(screen)
        self.sm = sm
        Window.bind(size=self._on_resize)
        self._on_resize(Window, Window.size)
        self._apply_kiosk(initial=True)
        if self.start != "new":
            sm.current = self.start
        Clock.schedule_interval(self.poll, 1.0 / POLL_HZ)
        return sm

    def _on_resize(self, _win: Any, size: tuple[int, int]) -> None:
        """Type and touch targets grow with the window beyond 800x480, never shrink below."""
        w, h = size
        self.scale = max(1.0, min(w / dp(BASE_SIZE[0]), h / dp(BASE_SIZE[1])))

    def _apply_kiosk(self, initial: bool = False) -> None:
        """Fullscreen and cursor. At start only what was asked for is applied, so the Kivy
        config (the kiosk's fullscreen, no cursor) is never overridden by a default; the
        settings then take the window as it is, so the Settings screen shows it and an Apply
        keeps it."""
        if self.settings.fullscreen or not initial:
            Window.fullscreen = "auto" if self.settings.fullscreen else False
        if self.settings.hide_cursor or not initial:
            Window.show_cursor = not self.settings.hide_cursor
        if initial:
            self.settings = replace(
                self.settings,
                fullscreen=bool(Window.fullscreen),
                hide_cursor=not Window.show_cursor,
            )

    # navigation
    def screen(self, name: str) -> Any:
        assert self.sm is not None
        return self.sm.get_screen(name)

    def go(self, name: str) -> None:
        assert self.sm is not None
        if self.sm.current != name:
            self.history = [*self.history[-19:], self.sm.current]
            self.sm.current = name
        self.poll(0)

    def go_back(self) -> None:
        assert self.sm is not None
        target = self.history.pop() if self.history else "table"
        while target in ("fix", "settings") and self.history:
            target = self.history.pop()
        self.sm.current = target
        self.poll(0)

    def open_card_fix(self, card_id: str) -> None:
        self.screen("fix").open_card(card_id)
        self.go("fix")

    def open_served(self, scorer: str | None) -> None:
        if self.controller.view().mode == "solo":
            return self.peek()
        self.screen("fix").open_served(scorer)
        self.go("fix")

    def peek(self) -> None:
        """Solo: the served piles, as a toast (the rulebook allows looking)."""
        view = self.controller.view()
        rows = vm.table_model(view, self.lang).served
        lines = [" · ".join(c.label for c in pile) for row in rows for pile in row.peek]
        self.screen("table").toast("\n".join(lines) or tr("empty", self.lang))

    def start_scoring(self) -> None:
        self.controller.begin_scoring()
        end = self.screen("end")
        end.start(self.controller.view())
        self.go("end")

    def show_scores(self, flow: vm.EndGame) -> None:
        self.controller.finish()
        view = self.controller.view()
        final = view.final if view.final else flow.local_tally()
        board = vm.scoreboard(final, flow.mode, self.lang)
        self.screen("scores").show(board, self.lang, flow.count_lines(self.lang))
        self.screen("scores").explain(live_record(self.controller, view), self.lang)
        self.go("scores")

    def open_recap(self) -> None:
        """The recap picture of the game on the Scores screen (saved beside the game log)."""
        record = self.screen("scores").record
        if record is not None:
            self.screen("recap").show(record, self.controller, self.lang)
            self.go("recap")

    # settings
    def set_language(self, lang: str) -> None:
        if lang in LANGUAGES and lang != self.lang:
            self.update_settings(language=lang)

    def update_settings(self, **changes: Any) -> None:
        s = self.settings
        fields = {k: getattr(s, k) for k in Settings.__dataclass_fields__}
        fields.update(changes)
        self.apply_settings(Settings(**fields))

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.lang = settings.language
        self.title = tr("app_title", self.lang)
        self.speaker.sound = settings.sound
        self.speaker.voice = settings.voice
        self._apply_kiosk()
        self.controller.apply_settings(settings)
        if self.store is not None:
            self.store.save(settings)
        if self.sm is not None and self.sm.current == "new":
            self.screen("new")._build_names()

    # the poll loop
    def poll(self, _dt: float) -> None:
        view = self.controller.view()
        frame = self.controller.latest_frame()
        self.last_view = view
        if view.error and view.error != self._error_shown:
            self._error_shown = view.error
            self.screen("table").toast(vm.camera_text(view.camera, self.lang, view.error))
            Clock.schedule_once(lambda _dt: self.stop(), ERROR_EXIT_S)
        if view.phase == "playing":
            for ann in self.announcer.update(view, self.lang):
                self.speaker.chime()
                self.speaker.say(ann.speech, self.lang)
        for warning in self.announcer.new_warnings(view, self.lang):
            self.screen("table").toast(warning)
        if (
            view.phase == "scoring"
            and self.last_phase == "playing"
            and self.sm is not None
            and self.sm.current == "table"
        ):
            self.screen("end").start(view)
            self.go("end")
        self.last_phase = view.phase
        if self.sm is not None:
            self.sm.current_screen.refresh(view, frame)


def run_app(
    controller: Controller,
    fullscreen: bool = False,
    language: str | None = None,
    size: tuple[int, int] = BASE_SIZE,
    settings: Settings | None = None,
    store: SettingsStore | None = None,
    start: str = "new",
) -> None:
    """Open the companion window on controller and run until it is closed.

    `settings` (optional) seeds the Settings screen (sound, voice, the source shown...);
    `fullscreen=True` (the kiosk: fullscreen without a cursor) and `language` override its
    fields. `store` keeps the settings between runs; `start` is the first screen. The window
    size is set only when neither the settings nor the Kivy config ask for fullscreen.
    """
    from kivy.config import Config

    base = settings or Settings()
    fields = {k: getattr(base, k) for k in Settings.__dataclass_fields__}
    if fullscreen:
        fields.update(fullscreen=True, hide_cursor=True)
    if language is not None:
        fields.update(language=language)
    kivy_fullscreen = Config.get("graphics", "fullscreen").strip().lower() not in ("0", "", "false")
    if not fields["fullscreen"] and not kivy_fullscreen:
        Window.size = size
    CompanionApp(controller, Settings(**fields), store=store, start=start).run()
