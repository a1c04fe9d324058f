// Ramen! Ramen! Table Companion: clamp-on camera head for a Raspberry Pi Camera Module 3.
//
// One printable part: a split ring that clamps on the end of a round arm tube (a lamp arm, a
// microphone boom, a length of electrical conduit), a neck, and a plate that holds the Camera
// Module 3 board on four M2 standoffs, lens pointing straight down at the table.
//
// Geometry the software assumes (companion/layout.py): Camera Module 3 with the standard
// 66 degree (horizontal) lens, 16:9 stream, lens DEFAULT 700 mm above the table, looking
// straight down at the centre of the 780 x 440 mm play area. At height h the lens covers
// 2 h tan(33 deg) = 1.30 h by 0.73 h, so 910 x 511 mm at 700 mm: about 65 mm of margin left and
// right and 36 mm top and bottom, which is what absorbs a few degrees of tilt. This file checks
// that the chosen camera_height still covers the (scaled) play area and prints the figures in
// the OpenSCAD console (Design > Compile shows them in the console window).
//
// Frame of this model: the arm tube runs along Y, the clamp ring lies round the origin, Z up.
// The camera plate hangs below the ring; its lens axis is -Z when tilt_deg = 0.
//
// Print: lay the ring flat on the bed (tube axis vertical, i.e. rotate so Y points up), PETG or
// PLA, 4 perimeters, 30 % infill; no supports needed for |tilt_deg| <= 45.
// Hardware: 1 x M4 x 30 bolt + nut for the clamp (or M3, see bolt_d), 4 x M2 x 6 screws
// (self-tapping into the standoffs, or M2 x 10 with nuts if standoff_hole_d is set to 2.2).

/* [Layout assumptions (see companion/layout.py)] */
// Lens height above the table, mm. The layout assumes 700 x layout_scale.
camera_height = 700;
// Scale s of the printed kit: markers and regions scaled by s, camera at s x 700 mm.
layout_scale = 1.0;
// Horizontal field of view of the lens, degrees (Camera Module 3 standard lens: 66).
hfov_deg = 66;
// Stream aspect ratio, height / width (16:9 streams such as 2304 x 1296).
aspect = 9 / 16;
// Play area between the outer marker corners at scale 1, mm.
play_w = 780;
play_h = 440;

/* [Arm and clamp] */
// Outside diameter of the arm tube the head clamps onto, mm (measure it; 0.4 mm is added for fit).
tube_d = 22;
// Radial thickness of the clamp ring, mm. 4 mm of PETG holds a 22 mm tube firmly.
clamp_wall = 4;
// Length of the clamp along the tube, mm. Wider grips better against the camera's torque.
clamp_width = 24;
// Clamp bolt diameter, mm (4 for M4, 3 for M3); the nut trap is sized from it.
bolt_d = 4;
// Gap left in the split ring so the bolt can squeeze it shut, mm.
clamp_gap = 2;

/* [Camera head] */
// Tilt of the camera plate about the X axis (across the tube), degrees. Set it to the slope of
// the arm tube so that the lens ends up level (0 for a horizontal boom). Check with the preview:
// all four markers must be visible with some margin.
tilt_deg = 0;
// Distance from the tube axis down to the camera plate, mm (room for the ribbon to bend).
neck_len = 30;
// Thickness of the camera plate, mm.
plate_t = 3;
// Height of the standoffs between the plate and the back of the board, mm; keeps the parts on
// the back of the board and the ribbon connector clear of the plate.
standoff_h = 4;
// Hole in the standoffs, mm: 1.7 for M2 self-tapping screws, 2.2 for through bolts and nuts.
standoff_hole_d = 1.7;

/* [Camera Module 3 board (fixed by the Raspberry Pi drawing)] */
board_w = 25;         // along X
board_h = 24;         // along Y
hole_dx = 21;         // M2 hole spacing along the 25 mm side
hole_dy = 12.5;       // M2 hole spacing along the 24 mm side
hole_from_top = 2;    // first row of holes from the board edge opposite the ribbon
lens_from_top = 14.5; // lens centre from that same edge (on the line of the second hole row)

/* [Hidden] */
$fn = 64;
eps = 0.01;
fit = 0.4;
ring_r_in = (tube_d + fit) / 2;
ring_r_out = ring_r_in + clamp_wall;
plate_margin = 3;
tie_margin = 8;      // extra plate beyond the ribbon edge for the cable-tie slot
neck_t = 10;         // thickness of the neck along X
plate_w = board_w + 2 * plate_margin;

// ---- Geometry check: does the view at camera_height cover the play area? ----
cover_w = 2 * camera_height * tan(hfov_deg / 2);
cover_h = cover_w * aspect;
need_w = play_w * layout_scale;
need_h = play_h * layout_scale;
// Pixels per mm on the table for the 2304 px wide full-field stream, and the height in pixels
// of a card's 16 mm index strip (the cascade only shows that strip).
px_per_mm = 2304 / cover_w;
echo(str("camera_height ", camera_height, " mm covers ", round(cover_w), " x ", round(cover_h),
         " mm; play area ", need_w, " x ", need_h, " mm; margins ",
         round((cover_w - need_w) / 2), " / ", round((cover_h - need_h) / 2), " mm"));
echo(str("at 2304 x 1296: ", round(px_per_mm * 100) / 100, " px/mm, index strip ",
         round(16 * px_per_mm), " px tall"));
echo(str("tilt tolerance before a marker leaves the view: about ",
         round(atan((cover_h - need_h) / 2 / camera_height) * 10) / 10, " deg (short side), ",
         round(atan((cover_w - need_w) / 2 / camera_height) * 10) / 10, " deg (long side)"));
assert(cover_w >= need_w && cover_h >= need_h,
       str("camera_height ", camera_height, " mm is too low for layout_scale ", layout_scale,
           ": raise it to at least ", ceil(need_h / aspect / (2 * tan(hfov_deg / 2))), " mm"));
assert(abs(tilt_deg) <= 60, "tilt_deg beyond 60 degrees: bend or re-angle the arm instead");
assert(tube_d > 5 && clamp_wall >= 2, "tube_d and clamp_wall are too small to print");

// ---- Parts ----

// Split ring round the tube with two ears and a bolt hole; the split is at the top so the
// camera's weight pulls the ring onto the tube, not open.
module clamp() {
    ear_len = bolt_d * 2.5 + 2;          // how far the ears stand above the ring
    ear_t = bolt_d * 1.5;                 // thickness of each ear
    nut_d = bolt_d * 1.75 / cos(30) + 0.4; // across corners (M4 nut: 7 mm across flats)
    nut_depth = bolt_d * 0.8;             // M4 nut: 3.2 mm
    bolt_z = ring_r_in + clamp_wall / 2 + ear_len / 2;
    difference() {
        union() {
            rotate([90, 0, 0]) cylinder(r = ring_r_out, h = clamp_width, center = true);
            // ears either side of the split
            for (side = [-1, 1])
                translate([side * (clamp_gap / 2 + ear_t / 2), 0, ring_r_in + ear_len / 2])
                    cube([ear_t, clamp_width, ear_len + clamp_wall], center = true);
        }
        rotate([90, 0, 0]) cylinder(r = ring_r_in, h = clamp_width + 2, center = true);
        // the split
        translate([0, 0, ring_r_in + ear_len / 2])
            cube([clamp_gap, clamp_width + 2, ear_len + 2 * clamp_wall + 2], center = true);
        // bolt through both ears, hexagonal nut trap in the outer face of the +X ear
        translate([0, 0, bolt_z]) {
            rotate([0, 90, 0])
                cylinder(d = bolt_d + 0.4, h = 2 * (clamp_gap + 2 * ear_t) + 2, center = true);
            translate([clamp_gap / 2 + ear_t - nut_depth, 0, 0])
                rotate([0, 90, 0]) rotate([0, 0, 30]) cylinder(d = nut_d, h = nut_depth + 1, $fn = 6);
        }
    }
}

// The camera plate: board on four standoffs, placed so that the lens sits on the neck axis.
// In plate coordinates the lens is at the origin, the plate's upper face at z = plate_t and
// the lens axis is -Z. The ribbon leaves the board towards -Y.
module camera_plate() {
    top_y = lens_from_top;                 // board edge opposite the ribbon
    bottom_y = lens_from_top - board_h;    // ribbon edge
    holes = [for (x = [-hole_dx / 2, hole_dx / 2],
                  y = [top_y - hole_from_top, top_y - hole_from_top - hole_dy]) [x, y]];
    y0 = bottom_y - tie_margin;
    y1 = top_y + plate_margin;
    difference() {
        union() {
            translate([-plate_w / 2, y0, 0]) cube([plate_w, y1 - y0, plate_t]);
            for (p = holes)
                translate([p[0], p[1], -standoff_h]) cylinder(d = 4.5, h = standoff_h + eps);
        }
        for (p = holes)
            translate([p[0], p[1], -standoff_h - 1])
                cylinder(d = standoff_hole_d, h = standoff_h + plate_t + 2);
        // window behind the sensor so the plate never presses on the back of the lens stack
        translate([0, 0, -1]) cylinder(d = 9, h = plate_t + 2);
        // cable-tie slot beyond the ribbon edge, for strain relief on the camera cable
        translate([-6, bottom_y - tie_margin / 2 - 1, -1]) cube([12, 2, plate_t + 2]);
    }
}

// The plate, tilted by tilt_deg about the X axis through the bottom of the neck.
module placed_plate() {
    translate([0, 0, -neck_len]) rotate([tilt_deg, 0, 0]) translate([0, 0, -plate_t]) children();
}

// Neck from the ring down to the plate: the hull of a slab under the ring and a slab on the
// (tilted) plate, so any tilt stays one solid piece.
module neck() {
    neck_w = clamp_width - 4;
    hull() {
        translate([-neck_t / 2, -neck_w / 2, -ring_r_in - 1]) cube([neck_t, neck_w, 1]);
        placed_plate() translate([-neck_t / 2, -neck_w / 2, plate_t - 1]) cube([neck_t, neck_w, 1]);
    }
}

module camera_head() {
    clamp();
    neck();
    placed_plate() camera_plate();
}

// A ghost of the Camera Module 3 board and lens in preview (F5) only, to check the fit.
module board_ghost() {
    placed_plate() translate([0, 0, -standoff_h]) {
            %translate([-board_w / 2, lens_from_top - board_h, -1]) cube([board_w, board_h, 1]);
            %translate([-4.25, -4.25, -1 - 6.5]) cube([8.5, 8.5, 6.5]);
        }
}

camera_head();
board_ghost();
