"""The default deck's art, deck folders (default or enrolled), printable kit, enrolment."""
