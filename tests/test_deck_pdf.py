"""The printable PDFs: parsed, measured and (markers) rasterised and detected."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from pypdf import PdfReader
from pypdf.generic import ContentStream

from companion import layout
from companion.cli import main
from companion.deck.pdf import KIT_PAGES, deck_grid, write_deck_pdf, write_kit_pdf

PT_PER_MM = 72 / 25.4
A4_PT = (595.2756, 841.8898)
LETTER_PT = (612.0, 792.0)


def _mult(a: list[float], b: list[float]) -> list[float]:
    """PDF matrix product a x b, matrices as [a b c d e f]."""
    return [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]


def image_boxes(reader: PdfReader, page_no: int) -> list[tuple[float, float, float, float]]:
    """(x, y, width, height) in points of every image XObject drawn on the page."""
    page = reader.pages[page_no]
    xobjects = page["/Resources"].get("/XObject", {})
    content = ContentStream(page.get_contents(), reader)
    ctm = [1.0, 0, 0, 1.0, 0, 0]
    stack: list[list[float]] = []
    boxes = []
    for operands, op in content.operations:
        if op == b"q":
            stack.append(ctm)
        elif op == b"Q":
            ctm = stack.pop()
        elif op == b"cm":
            ctm = _mult([float(v) for v in operands], ctm)
        elif op == b"Do":
            xo = xobjects[operands[0]].get_object()
            if xo["/Subtype"] == "/Image":
                boxes.append((ctm[4], ctm[5], ctm[0], ctm[3]))
    return boxes


@pytest.fixture(scope="module")
def deck_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_deck_pdf(tmp_path_factory.mktemp("deck") / "deck.pdf", "a4")


@pytest.mark.slow
def test_deck_pdf_has_seven_face_pages_and_a_backs_page(deck_pdf: Path) -> None:
    reader = PdfReader(deck_pdf)
    assert len(reader.pages) == 8
    for page in reader.pages:
        w, h = float(page.mediabox.width), float(page.mediabox.height)
        assert (w, h) == pytest.approx(A4_PT, abs=0.01)
    counts = [len(image_boxes(reader, i)) for i in range(8)]
    assert counts == [9, 9, 9, 9, 9, 9, 2, 9]  # 56 = 6 x 9 + 2, then 9 backs


@pytest.mark.slow
def test_every_card_is_exactly_63_by_88_mm_in_a_grid(deck_pdf: Path) -> None:
    reader = PdfReader(deck_pdf)
    x0, y0 = deck_grid("a4")
    w, h = 63 * PT_PER_MM, 88 * PT_PER_MM
    assert w == pytest.approx(178.58, abs=0.01)
    for i in range(8):
        for x, y, bw, bh in image_boxes(reader, i):
            assert bw == pytest.approx(w, abs=0.01)
            assert bh == pytest.approx(h, abs=0.01)
            col, row = (x - x0) / w, (y - y0) / h
            assert col == pytest.approx(round(col), abs=1e-3) and 0 <= round(col) <= 2
            assert row == pytest.approx(round(row), abs=1e-3) and 0 <= round(row) <= 2


@pytest.mark.slow
def test_deck_pages_name_their_cards_and_warn_to_print_actual_size(deck_pdf: Path) -> None:
    reader = PdfReader(deck_pdf)
    first = reader.pages[0].extract_text()
    assert "ajitama-0" in first and "Actual size" in first and "50 mm" in first
    assert "shiitake-7" in reader.pages[6].extract_text()


@pytest.mark.slow
def test_letter_deck_fits_and_keeps_card_size(tmp_path: Path) -> None:
    reader = PdfReader(write_deck_pdf(tmp_path / "deck.pdf", "letter", backs=False))
    assert len(reader.pages) == 7
    assert float(reader.pages[0].mediabox.width) == pytest.approx(LETTER_PT[0])
    _, _, bw, bh = image_boxes(reader, 0)[0]
    assert (bw / PT_PER_MM, bh / PT_PER_MM) == pytest.approx((63, 88), abs=0.01)


@pytest.fixture(scope="module")
def kit_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_kit_pdf(tmp_path_factory.mktemp("kit") / "table-kit.pdf", "a4")


def test_kit_pages_markers_layout_setup(kit_pdf: Path) -> None:
    reader = PdfReader(kit_pdf)
    assert len(reader.pages) == len(KIT_PAGES) == 3
    texts = [p.extract_text() for p in reader.pages]
    for i in range(4):
        assert f"marker {i}" in texts[0]
    assert "corner: top-left" in texts[0] and "corner: bottom-right" in texts[0]
    layout_page = reader.pages[1]
    assert float(layout_page.mediabox.width) > float(layout_page.mediabox.height)  # landscape
    assert "Fridge 1" in texts[1] and "Bowl 3" in texts[1] and "Scan area" in texts[1]
    assert f"{layout.PLAY_W_MM:g}" in texts[1]  # dimensioned from layout.py
    assert "16 mm lower" in texts[1]
    assert "700 mm" in texts[2] and "66 degrees" in texts[2] and "s x 700 mm" in texts[2]
    for text in texts:
        assert "Actual size" in text and "50 mm" in text


def _rasterise(pdf: Path, page: int, dpi: int, tmp_path: Path) -> np.ndarray:
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm missing: apt-get install poppler-utils")
    prefix = tmp_path / f"p{page}"
    pages = ["-f", str(page), "-l", str(page)]
    subprocess.run(
        ["pdftoppm", "-r", str(dpi), *pages, "-png", "-singlefile", str(pdf), str(prefix)],
        check=True,
    )
    image = cv2.imread(str(prefix) + ".png")
    assert image is not None
    return image


def test_printed_markers_are_detected_and_40_mm(kit_pdf: Path, tmp_path: Path) -> None:
    dpi = 100
    image = _rasterise(kit_pdf, 1, dpi, tmp_path)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    assert ids is not None
    assert sorted(ids.ravel().tolist()) == list(layout.MARKER_IDS)
    side_px = layout.MARKER_MM / 25.4 * dpi
    for quad in corners:
        q = quad.reshape(4, 2)
        sides = np.linalg.norm(q - np.roll(q, 1, axis=0), axis=1)
        assert sides == pytest.approx(side_px, abs=2.0)
        # printed upright: ArUco's first corner (the marker's top-left) is at the top-left
        assert q[0, 0] < q[1, 0] and q[0, 1] < q[3, 1]


@pytest.mark.slow
def test_cli_print_writes_both_pdfs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deck", "print", str(tmp_path), "--paper", "letter", "--no-backs"]) == 0
    assert len(PdfReader(tmp_path / "deck.pdf").pages) == 7
    assert len(PdfReader(tmp_path / "table-kit.pdf").pages) == 3
    assert "actual size" in capsys.readouterr().out


def test_cli_faces_writes_56_pngs_at_the_asked_resolution(tmp_path: Path) -> None:
    assert main(["deck", "faces", str(tmp_path), "--dpi", "127"]) == 0
    pngs = sorted(p.name for p in tmp_path.glob("*.png") if p.name != "back.png")
    assert len(pngs) == 56 and "nori-4.png" in pngs
    img = cv2.imread(str(tmp_path / "nori-4.png"))
    assert img.shape[:2] == (88 * 5, 63 * 5)  # 127 dpi = 5 px/mm
