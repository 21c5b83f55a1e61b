"""What each command reports, as plain dataclasses built from the analyses."""
