#!/usr/bin/env bash
# Install the Ramen! Ramen! Table Companion on a Raspberry Pi (Raspberry Pi OS Bookworm, 64-bit)
# as a fullscreen kiosk that starts at boot.
#
#   git clone <this repository> ~/ramen-companion
#   cd ~/ramen-companion && bash hardware/pi/install.sh
#
# Run it as the desktop user (not root): it calls sudo for the system steps. Safe to re-run after
# `git pull`: every step checks before it changes anything. What it does:
#   1. apt packages: python3-picamera2 (camera; only Raspberry Pi OS has it), python3-venv, the
#      SDL2 / GL / mtdev libraries Kivy uses, espeak-ng (spoken announcements), sqlite3;
#   2. adds the user to the video, render, input and audio groups (camera, GPU, touchscreen);
#   3. a virtual environment at <checkout>/.venv made with --system-site-packages, so the OS's
#      picamera2 is visible, and `pip install -c constraints.txt -e ".[pi]"` of the checkout
#      into it, every package at its pinned version (no torch or ultralytics: they are the
#      `train` extra, which playing never imports), plus the NCNN runtime;
#   4. checks that the NCNN model committed in models/strips_ncnn_model/ is there (nothing is
#      downloaded);
#   5. the Kivy configuration for the touchscreen -> ~/.config/ramen-companion/kivy/config.ini;
#   6. the systemd unit -> /etc/systemd/system/ramen-companion.service, enabled (it resumes an
#      unfinished game after a power cut); desktop autologin switched on and screen blanking
#      switched off with raspi-config (RAMEN_NO_AUTOLOGIN=1 leaves autologin alone); the
#      folders the hardened unit may write (game log, settings) are made.
#
# Options:
#   --print-unit   print the systemd unit as it would be installed, change nothing, exit
#   --no-service   do everything except installing and enabling the systemd unit
#   -h, --help     this text
# Environment: RAMEN_VENV (default <checkout>/.venv), RAMEN_FORCE=1 (run on an OS other than
# Raspberry Pi OS Bookworm/Trixie 64-bit), RAMEN_NO_AUTOLOGIN=1.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
APP_DIR=$(cd -- "$SCRIPT_DIR/../.." && pwd)
VENV=${RAMEN_VENV:-$APP_DIR/.venv}
RUN_USER=$(id -un)
RUN_UID=$(id -u)
# The passwd entry, not $HOME, which can be root's under some sudo set-ups.
RUN_HOME=$(getent passwd "$RUN_USER" | cut -d: -f6)
CONFIG_DIR=$RUN_HOME/.config/ramen-companion
UNIT_NAME=ramen-companion.service
UNIT_TEMPLATE=$SCRIPT_DIR/$UNIT_NAME
UNIT_PATH=/etc/systemd/system/$UNIT_NAME
KIVY_CONFIG=$SCRIPT_DIR/kivy_config.ini
CONSTRAINTS=$SCRIPT_DIR/constraints.txt
MODEL_DIR=$APP_DIR/models/strips_ncnn_model

APT_PACKAGES=(
    python3-picamera2 # the camera (libcamera bindings); from the Raspberry Pi OS archive
    python3-venv
    python3-pip
    libsdl2-2.0-0 # Kivy's window (used if the Kivy wheel does not carry its own SDL2)
    libsdl2-image-2.0-0
    libsdl2-mixer-2.0-0
    libsdl2-ttf-2.0-0
    libgl1 # OpenGL (ES) through Mesa's V3D driver
    libegl1
    libgles2
    libmtdev1  # Kivy's mtdev touchscreen provider loads it at run time
    espeak-ng  # "Bowl 2 is ready to serve", spoken
    sqlite3    # to look into the game log by hand
)
GROUPS_NEEDED=(video render input audio)

log() { printf '[install] %s\n' "$*"; }
warn() { printf '[install] WARNING: %s\n' "$*" >&2; }
die() {
    printf '[install] ERROR: %s\n' "$*" >&2
    exit 1
}

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

# The unit template with this user's names and paths filled in.
render_unit() {
    local unit
    unit=$(<"$UNIT_TEMPLATE")
    unit=${unit//@USER@/"$RUN_USER"}
    unit=${unit//@UID@/"$RUN_UID"}
    unit=${unit//@HOME@/"$RUN_HOME"}
    unit=${unit//@APP_DIR@/"$APP_DIR"}
    unit=${unit//@VENV@/"$VENV"}
    printf '%s\n' "$unit"
}

check_platform() {
    local codename="" arch
    arch=$(uname -m)
    if [ -r /etc/os-release ]; then
        # shellcheck source=/dev/null
        codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    fi
    [ "$(id -u)" -ne 0 ] || die "run this as the desktop user, not as root: it uses sudo itself"
    command -v sudo >/dev/null || die "sudo is missing"
    if [ "${RAMEN_FORCE:-0}" = 1 ]; then
        warn "RAMEN_FORCE=1: not checking the OS ($codename, $arch)"
        return 0
    fi
    [ "$arch" = aarch64 ] || die "this is $arch: install the 64-bit Raspberry Pi OS (aarch64)"
    case "$codename" in
        bookworm) ;;
        trixie) warn "Raspberry Pi OS Trixie: not tested yet, Bookworm is the reference" ;;
        *) die "this is '$codename', not Raspberry Pi OS Bookworm (RAMEN_FORCE=1 to try anyway)" ;;
    esac
}

install_apt_packages() {
    local missing=() pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        if [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" != "ii " ]; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        log "apt packages: all present"
        return 0
    fi
    log "apt packages: installing ${missing[*]}"
    sudo apt-get update
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

add_groups() {
    local have group
    have=" $(id -nG "$RUN_USER") "
    for group in "${GROUPS_NEEDED[@]}"; do
        getent group "$group" >/dev/null || continue
        if [[ $have != *" $group "* ]]; then
            log "adding $RUN_USER to group $group"
            sudo usermod -aG "$group" "$RUN_USER"
        fi
    done
}

make_venv() {
    if [ -x "$VENV/bin/python" ]; then
        grep -q '^include-system-site-packages = true' "$VENV/pyvenv.cfg" ||
            die "$VENV was made without --system-site-packages, so picamera2 is invisible: remove it and re-run"
        log "venv: $VENV (exists)"
    else
        log "venv: creating $VENV with --system-site-packages"
        python3 -m venv --system-site-packages "$VENV"
    fi
}

install_project() {
    local py=$VENV/bin/python stamp
    # Reinstall only when pyproject.toml or the pins changed; code changes need nothing
    # (editable install). Every package comes at the version in constraints.txt, the versions
    # the tests ran with; the training packages (torch, ultralytics: the `train` extra) are
    # not installed at all, since playing never imports them.
    stamp="$VENV/.installed-pi-$(cat "$APP_DIR/pyproject.toml" "$CONSTRAINTS" | sha1sum | cut -c1-12)"
    if [ -f "$stamp" ]; then
        log "project: installed (pyproject.toml and constraints.txt unchanged)"
    else
        log "project: pip install -e \".[pi]\" -c constraints.txt (first run: a few minutes)"
        "$py" -m pip install -c "$CONSTRAINTS" -e "${APP_DIR}[pi]"
        rm -f "$VENV"/.installed-pi-*
        touch "$stamp"
    fi
    # The NCNN runtime (ultralytics' recommended format for the Pi's CPU).
    if ! "$py" -c 'import ncnn' 2>/dev/null; then
        log "project: installing the ncnn runtime"
        "$py" -m pip install -c "$CONSTRAINTS" ncnn
    fi
    # pip brings numpy 2; the OS's simplejpeg (imported by picamera2) is built for numpy 1 and
    # then fails to import. A simplejpeg from PyPI inside the venv is built for numpy 2.
    if ! "$py" -c 'import simplejpeg' 2>/dev/null; then
        log "project: installing simplejpeg for numpy 2 into the venv"
        "$py" -m pip install --ignore-installed --no-deps "simplejpeg>=1.8.1"
    fi
    "$py" -c 'import picamera2' ||
        die "picamera2 does not import in $VENV (see the error above); is python3-picamera2 installed?"
    "$VENV/bin/companion" --help >/dev/null || die "the companion command does not run"
    log "project: picamera2, ncnn and the companion command all import"
}

check_model() {
    if [ -f "$MODEL_DIR/model.ncnn.param" ] && [ -f "$MODEL_DIR/model.ncnn.bin" ]; then
        log "model: $MODEL_DIR"
    else
        warn "no NCNN model in $MODEL_DIR: the app falls back to the ONNX or PyTorch model if models/ has one (slower); restore models/ with git"
    fi
}

install_kivy_config() {
    local dest=$CONFIG_DIR/kivy/config.ini
    mkdir -p "$CONFIG_DIR/kivy" "$CONFIG_DIR/yolo"
    if [ -f "$dest" ] && cmp -s "$KIVY_CONFIG" "$dest"; then
        log "kivy config: $dest (up to date)"
        return 0
    fi
    if [ -f "$dest" ]; then
        cp "$dest" "$dest.bak"
        log "kivy config: previous one kept as $dest.bak"
    fi
    install -m 644 "$KIVY_CONFIG" "$dest"
    log "kivy config: $dest"
}

# The game may sit still for minutes (a player thinking): the screen must not go dark. Kivy
# already keeps it awake while its window is up (allow_screensaver = 0); this also stops the
# desktop's own blanking (X11 and Wayland) before and between runs of the kiosk.
disable_screen_blanking() {
    if command -v raspi-config >/dev/null; then
        log "screen blanking: off (raspi-config nonint do_blanking 1)"
        sudo raspi-config nonint do_blanking 1
    else
        warn "no raspi-config: switch screen blanking off in the desktop's settings"
    fi
}

# The only folders the hardened unit may write (ProtectSystem=strict + ReadWritePaths=).
make_writable_dirs() {
    mkdir -p "$RUN_HOME/.local/share/ramen-companion" "$CONFIG_DIR"
}

install_service() {
    local rendered
    rendered=$(mktemp)
    # a global EXIT trap: a RETURN trap would outlive this function and fire in main
    RENDERED_UNIT=$rendered
    trap 'rm -f "$RENDERED_UNIT"' EXIT
    render_unit >"$rendered"
    make_writable_dirs
    if [ -f "$UNIT_PATH" ] && cmp -s "$rendered" "$UNIT_PATH"; then
        log "systemd unit: $UNIT_PATH (up to date)"
    else
        log "systemd unit: installing $UNIT_PATH"
        sudo install -m 644 "$rendered" "$UNIT_PATH"
        sudo systemctl daemon-reload
    fi
    if ! systemctl is-enabled --quiet "$UNIT_NAME" 2>/dev/null; then
        sudo systemctl enable "$UNIT_NAME"
    fi
    if [ "${RAMEN_NO_AUTOLOGIN:-0}" != 1 ] && command -v raspi-config >/dev/null; then
        # B4: boot to the desktop, logged in as this user (the kiosk needs the display).
        log "desktop autologin: on (raspi-config nonint do_boot_behaviour B4)"
        sudo raspi-config nonint do_boot_behaviour B4
    fi
    disable_screen_blanking
    if systemctl is-active --quiet "$UNIT_NAME"; then
        log "restarting the running kiosk to pick up this install"
        sudo systemctl restart "$UNIT_NAME"
    else
        log "the kiosk starts at the next boot; now: sudo systemctl start $UNIT_NAME"
    fi
}

check_camera() {
    if command -v rpicam-hello >/dev/null; then
        if rpicam-hello --list-cameras 2>&1 | grep -q imx708; then
            log "camera: Camera Module 3 (imx708) found"
        else
            warn "no Camera Module 3 found (rpicam-hello --list-cameras): check the ribbon cable"
        fi
    fi
}

main() {
    local with_service=1
    while [ $# -gt 0 ]; do
        case "$1" in
            --print-unit)
                render_unit
                return 0
                ;;
            --no-service) with_service=0 ;;
            -h | --help)
                usage
                return 0
                ;;
            *) die "unknown option $1 (see --help)" ;;
        esac
        shift
    done
    check_platform
    install_apt_packages
    add_groups
    make_venv
    install_project
    check_model
    install_kivy_config
    if [ "$with_service" = 1 ]; then
        install_service
    fi
    check_camera
    log "done. Logs: journalctl -u $UNIT_NAME -f"
}

main "$@"
