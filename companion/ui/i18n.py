"""Every string the screen shows, in English and French (the French rulebook's own words).

One dict per language, same keys; `tr(key, lang, **fields)` formats a line. A key missing in
French falls back to English, so a new screen never shows a raw key. Pure Python: no Kivy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from companion.deck.palette import INGREDIENT_LABELS

LANGUAGES: Final[tuple[str, ...]] = ("en", "fr")

STRINGS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "app_title": "Ramen! Ramen!",
        # new game
        "new_game": "New game",
        "mode": "Mode",
        "mode_solo": "Solo",
        "mode_2p": "2",
        "mode_3p": "3",
        "mode_4p": "4 teams",
        "players": "Players",
        "player_n": "Player {n}",
        "team": "Team {name}",
        "language": "Language",
        "camera_source": "Camera",
        "start": "Start",
        "check": "Table check",
        # camera states (GameView.camera)
        "cam_ok": "Camera ready",
        "cam_camera lost": "Camera lost",
        "cam_reconnecting": "Camera lost: reconnecting…",
        "pipeline_error": "Stopped: {error}",
        "cam_markers not found": "Markers not found",
        "cam_too dark": "Too dark",
        "cam_glare": "Glare on the table",
        "cam_out of focus": "Camera out of focus: focus it on the table",
        "cam_no_frame": "No picture yet",
        # table
        "fridge": "Fridge",
        "bowl": "Bowl {n}",
        "bowl_of": "Bowl {n} · {owner}",
        "sum": "Sum",
        "types": "Types",
        "turn": "Turn {n} · {player}",
        "turn_none": "Waiting for the first play",
        "served": "Served",
        "served_count": "{name}: {count}",
        "ready_banner": "Bowl {n} — ready to serve!",
        "ready_banner_many": "Bowls {ns} — ready to serve!",
        "ready_speech": "Bowl {n} is ready to serve",
        "end_game": "Score",
        "score_sure": "Score?",
        "settings": "Settings",
        "undo": "Undo",
        "back": "Back",
        "peek": "Peek",
        "empty": "empty",
        # corrections
        "fix_card": "Fix {card}",
        "pick_ingredient": "Which ingredient?",
        "pick_value": "{name}: which value?",
        "give_bowl": "Give a served bowl",
        "served_item": "#{n} · Bowl {bowl} · {name}",
        "give_to": "Give #{n} to:",
        "cancel": "Cancel",
        # end game
        "scoring": "Scoring",
        "spread": "{name}: spread your served bowls one at a time in the scan area",
        "pile_of": "{k} of {total} read",
        "nothing_read": "Nothing read yet",
        "pile_line": "{types} · {points}",
        "n_types": "{n} types",
        "n_types_one": "{n} type",
        "n_points": "{n} pts",
        "n_points_one": "{n} pt",
        "match": "Matches what was served",
        "differs": "Differs from what was served",
        "missing": "Missing: {cards}",
        "extra": "Extra: {cards}",
        "keep_read": "Keep as read",
        "use_seen": "Use as served",
        "next_pile": "Next bowl",
        "next_player": "Next player",
        "show_scores": "Show scores",
        "scoreboard": "Scores",
        "col_name": "Name",
        "col_points": "Points",
        "col_bowls": "Bowls",
        "col_cards": "Cards",
        "winner": "{name} wins!",
        "winners": "Shared victory: {names}",
        "tie_bowls": "Tie on points: most bowls served wins",
        "tie_cards": "Tie on points and bowls: fewest cards wins",
        "stars": "Critics: {stars}",
        "piles_missing": "{name}: {read} read, {served} served",
        # after the game: recap, history (issue 13)
        "recap": "Recap",
        "past_games": "Past games",
        "bg_stats": "Scan to log this play in BG Stats",
        "no_bowls": "No bowl served",
        "tie_decided_bowls": "{a} and {b} both {points} points: {a} served {x} bowls to {y}",
        "tie_decided_cards": "{a} and {b} both {points} points and {bowls} bowls: "
        "{a} used {x} cards to {y}",
        "tie_shared": "Tied on points, bowls and cards: a shared victory",
        "next_star": "Next star at {points} points ({more} more)",
        "top_stars": "The critics' best: five stars",
        "status_finished": "Finished",
        "status_unfinished": "Unfinished",
        "status_damaged": "Damaged",
        "col_date": "Date",
        "col_mode": "Mode",
        "col_result": "Result",
        "col_games": "Games",
        "col_wins": "Wins",
        "col_mean": "Mean",
        "col_best_bowl": "Best bowl",
        "no_games": "No game in the log yet",
        "history_error": "Cannot read the game log: {error}",
        "solo_best": "Solo, {name}: best {points} pts ({stars})",
        "recap_saved": "Recap saved: {path}",
        "recap_header": "{mode} · {date} · {minutes} min · {turns} turns",
        "mode_name_solo": "Solo",
        "mode_name_2p": "2 players",
        "mode_name_3p": "3 players",
        "mode_name_4p": "4 players in teams",
        "score_over_turns": "Points over the turns",
        "turn_axis": "turn",
        "standings": "Standings",
        # settings
        "sound": "Sound",
        "voice": "Voice",
        "calibration": "Calibration view",
        "fullscreen": "Fullscreen",
        "hide_cursor": "Hide cursor",
        "on": "On",
        "off": "Off",
        "apply": "Apply",
        # rule warnings and notices (companion.tracking.warnings: warn_<code>)
        "warn_already_served": "{card} was already served: ignoring it.",
        "warn_moved_between_bowls": "{card} moved from {src} to {dst}.",
        "warn_fridge_to_bowl": "{card} went from the Fridge straight into {bowl}.",
        "warn_refill_missed": "Refill the Fridge before the next player plays.",
        "warn_third_card": "A third card this turn went into {bowl}: only two per turn.",
        "warn_played_after_end": "{card} was played after all cards were played.",
        "warn_same_bowl_twice": "Two cards went into {bowl} this turn: use two different bowls.",
        "warn_bowl_served_this_turn": "{bowl} was served this turn: start it again next turn.",
        "warn_bowl_taken_unready": "{bowl} was taken away but it was not ready "
        "(sum {sum} of 14, {types} of 7 types).",
        "warn_served_early": "{bowl} was served before both cards were played.",
        "warn_take_before_plays": "Play your cards before taking from the Fridge.",
        "warn_second_take": "Only one Fridge card per turn.",
        "warn_moved_to_fridge": "{card} moved from {src} to the Fridge.",
        "warn_fridge_deck_empty": "{card} appeared in the Fridge but the deck is empty.",
        "warn_scan_unmatched": "This pile matches no served bowl: tell me whose it is.",
        "warn_scan_differs": "{who}'s pile differs from the bowl I saw served: please check it.",
        "warn_card_hidden": "I can't see {card} in {bowl} any more: "
        "keep the top strip of every card showing.",
        "region_fridge": "the Fridge",
    },
    "fr": {
        "app_title": "Ramen! Ramen!",
        "new_game": "Nouvelle partie",
        "mode": "Mode",
        "mode_solo": "Solo",
        "mode_2p": "2",
        "mode_3p": "3",
        "mode_4p": "4 équipes",
        "players": "Joueurs",
        "player_n": "Joueur {n}",
        "team": "Équipe {name}",
        "language": "Langue",
        "camera_source": "Caméra",
        "start": "Jouer",
        "check": "Vérification",
        "cam_ok": "Caméra prête",
        "cam_camera lost": "Caméra perdue",
        "cam_reconnecting": "Caméra perdue : reconnexion…",
        "pipeline_error": "Arrêt : {error}",
        "cam_markers not found": "Repères introuvables",
        "cam_too dark": "Trop sombre",
        "cam_glare": "Reflets sur la table",
        "cam_out of focus": "Caméra floue : faites la mise au point sur la table",
        "cam_no_frame": "Pas encore d’image",
        "fridge": "Réfrigérateur",
        "bowl": "Bol {n}",
        "bowl_of": "Bol {n} · {owner}",
        "sum": "Somme",
        "types": "Types",
        "turn": "Tour {n} · {player}",
        "turn_none": "En attente du premier coup",
        "served": "Servis",
        "served_count": "{name} : {count}",
        "ready_banner": "Bol {n} — prêt à servir !",
        "ready_banner_many": "Bols {ns} — prêts à servir !",
        "ready_speech": "Le bol {n} est prêt à servir",
        "end_game": "Score",
        "score_sure": "Compter ?",
        "settings": "Réglages",
        "undo": "Annuler",
        "back": "Retour",
        "peek": "Voir",
        "empty": "vide",
        "fix_card": "Corriger {card}",
        "pick_ingredient": "Quel ingrédient ?",
        "pick_value": "{name} : quelle valeur ?",
        "give_bowl": "Donner un bol servi",
        "served_item": "n°{n} · Bol {bowl} · {name}",
        "give_to": "Donner n°{n} à :",
        "cancel": "Retour",
        "scoring": "Calcul du score",
        "spread": "{name} : étalez vos bols servis un par un dans la zone de lecture",
        "pile_of": "{k} sur {total} lus",
        "nothing_read": "Rien de lu pour l’instant",
        "pile_line": "{types} · {points}",
        "n_types": "{n} types",
        "n_types_one": "{n} type",
        "n_points": "{n} pts",
        "n_points_one": "{n} pt",
        "match": "Conforme au bol servi",
        "differs": "Différent du bol servi",
        "missing": "Manque : {cards}",
        "extra": "En trop : {cards}",
        "keep_read": "Garder la lecture",
        "use_seen": "Prendre le bol servi",
        "next_pile": "Bol suivant",
        "next_player": "Joueur suivant",
        "show_scores": "Voir les scores",
        "scoreboard": "Scores",
        "col_name": "Nom",
        "col_points": "Points",
        "col_bowls": "Bols",
        "col_cards": "Cartes",
        "winner": "{name} gagne !",
        "winners": "Victoire partagée : {names}",
        "tie_bowls": "Égalité : le plus de Bols servis gagne",
        "tie_cards": "Égalité : le moins de cartes gagne",
        "stars": "Critiques : {stars}",
        "piles_missing": "{name} : {read} lus, {served} servis",
        # after the game: recap, history (issue 13)
        "recap": "Récap",
        "past_games": "Parties passées",
        "bg_stats": "Scannez pour noter la partie dans BG Stats",
        "no_bowls": "Aucun bol servi",
        "tie_decided_bowls": "{a} et {b} ont {points} points : {a} a servi {x} bols contre {y}",
        "tie_decided_cards": "{a} et {b} ont {points} points et {bowls} bols : "
        "{a} a utilisé {x} cartes contre {y}",
        "tie_shared": "Égalité de points, de bols et de cartes : victoire partagée",
        "next_star": "Étoile suivante à {points} points ({more} de plus)",
        "top_stars": "Le meilleur des critiques : cinq étoiles",
        "status_finished": "Terminée",
        "status_unfinished": "Non terminée",
        "status_damaged": "Endommagée",
        "col_date": "Date",
        "col_mode": "Mode",
        "col_result": "Résultat",
        "col_games": "Parties",
        "col_wins": "Victoires",
        "col_mean": "Moyenne",
        "col_best_bowl": "Meilleur bol",
        "no_games": "Aucune partie enregistrée",
        "history_error": "Journal des parties illisible : {error}",
        "solo_best": "Solo, {name} : record {points} pts ({stars})",
        "recap_saved": "Récap enregistré : {path}",
        "recap_header": "{mode} · {date} · {minutes} min · {turns} tours",
        "mode_name_solo": "Solo",
        "mode_name_2p": "2 joueurs",
        "mode_name_3p": "3 joueurs",
        "mode_name_4p": "4 joueurs en équipes",
        "score_over_turns": "Points au fil des tours",
        "turn_axis": "tour",
        "standings": "Classement",
        "sound": "Son",
        "voice": "Voix",
        "calibration": "Vue de calibrage",
        "fullscreen": "Plein écran",
        "hide_cursor": "Cacher le curseur",
        "on": "Oui",
        "off": "Non",
        "apply": "Appliquer",
        "warn_already_served": "{card} a déjà été servie : je l'ignore.",
        "warn_moved_between_bowls": "{card} est passée du {src} au {dst}.",
        "warn_fridge_to_bowl": "{card} est allée du Réfrigérateur directement dans le {bowl}.",
        "warn_refill_missed": "Complétez le Réfrigérateur avant que le joueur suivant ne joue.",
        "warn_third_card": "Une troisième carte ce tour-ci dans le {bowl} : deux par tour "
        "seulement.",
        "warn_played_after_end": "{card} a été jouée alors que toutes les cartes l'étaient.",
        "warn_same_bowl_twice": "Deux cartes dans le {bowl} ce tour-ci : jouez dans deux Bols "
        "différents.",
        "warn_bowl_served_this_turn": "Le {bowl} a été servi ce tour-ci : recommencez-le au "
        "prochain tour.",
        "warn_bowl_taken_unready": "Le {bowl} a été retiré alors qu'il n'était pas prêt "
        "(somme {sum} sur 14, {types} types sur 7).",
        "warn_served_early": "Le {bowl} a été servi avant que les deux cartes soient jouées.",
        "warn_take_before_plays": "Jouez vos cartes avant de prendre dans le Réfrigérateur.",
        "warn_second_take": "Une seule carte du Réfrigérateur par tour.",
        "warn_moved_to_fridge": "{card} est passée du {src} au Réfrigérateur.",
        "warn_fridge_deck_empty": "{card} est apparue dans le Réfrigérateur mais la pioche est "
        "vide.",
        "warn_scan_unmatched": "Cette pile ne correspond à aucun Bol servi : à qui est-elle ?",
        "warn_scan_differs": "La pile de {who} diffère du Bol que j'ai vu servir : vérifiez-la.",
        "warn_card_hidden": "Je ne vois plus {card} dans le {bowl} : laissez dépasser le haut de "
        "chaque carte.",
        "region_fridge": "Réfrigérateur",
    },
}

INGREDIENT_NAMES: Final[dict[str, dict[str, str]]] = {
    # The French rulebook keeps the Japanese names (with a gloss: Ajitama/Œufs...).
    "en": dict(INGREDIENT_LABELS),
    "fr": dict(INGREDIENT_LABELS),
}


def tr(key: str, lang: str = "en", **fields: object) -> str:
    """The line for key in lang (English if lang or key is unknown), fields filled in."""
    table = STRINGS.get(lang, STRINGS["en"])
    text = table.get(key) or STRINGS["en"].get(key, key)
    return text.format(**fields) if fields else text


def count(key: str, n: int, lang: str = "en") -> str:
    """`1 type` / `2 types`, `1 pt` / `5 pts`; French is singular for 0 and 1 as well."""
    one = n == 1 or (lang == "fr" and n == 0)
    return tr(f"{key}_one" if one else key, lang, n=n)


def ingredient_name(ingredient: str, lang: str = "en") -> str:
    return INGREDIENT_NAMES.get(lang, INGREDIENT_NAMES["en"]).get(ingredient, ingredient)


def card_label(card_id: str, lang: str = "en") -> str:
    """`nori-4` -> `4 Nori`: the value first, as it is read on the card's strip."""
    ingredient, _, value = card_id.rpartition("-")
    return f"{value} {ingredient_name(ingredient, lang)}" if ingredient else card_id


def stars_text(stars: float) -> str:
    """3.5 -> `★★★½☆`: five places, a half as `½` (as the rulebook prints it)."""
    full = int(stars)
    half = stars - full >= 0.5
    return "★" * full + ("½" if half else "") + "☆" * (5 - full - (1 if half else 0))


WARNING_REGION_PARAMS: Final = frozenset({"bowl", "src", "dst"})


def region_text(region: str, lang: str = "en") -> str:
    """`bowl-2` -> `Bowl 2` / `Bol 2`; `fridge` -> the Fridge's name; other ids as they are."""
    if region.startswith("bowl-"):
        return tr("bowl", lang, n=region.removeprefix("bowl-"))
    return tr("region_fridge", lang) if region == "fridge" else region


def warning_text(code: str, params: Mapping[str, str], lang: str = "en") -> str:
    """A follower warning or notice (companion.tracking.warnings: code + raw ids) as a line
    in lang: card ids read as on the card (`4 Nori`), bowls as the screen names them."""
    fields: dict[str, str] = {}
    for key, value in params.items():
        if key in WARNING_REGION_PARAMS:
            fields[key] = region_text(value, lang)
        elif key == "card":
            fields[key] = card_label(value, lang)
        else:
            fields[key] = value
    key = f"warn_{code}"
    if key not in STRINGS["en"]:
        return code
    text = STRINGS.get(lang, STRINGS["en"]).get(key) or STRINGS["en"][key]
    return text.format_map(_Blank(fields))  # a field missing from an old log shows as "?"


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"
