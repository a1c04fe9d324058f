"""The touchscreen app. `controller` and `viewmodels` are pure Python (no Kivy); `app` opens
the window: `from companion.ui.app import run_app`."""
