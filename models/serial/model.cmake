# serial: the plain algorithm on one core (serial.reference) and the float64 reference that
# verification compares every variant against. Always in the build.
nbody_register_model(NAME serial TITLE serial IN_BUILD ON STATUS "on (always)"
                     FAMILY hand-written REPORT_ORDER 90)
