"""Importers of published studies: ``study`` (a Spot The Bot study as a finished tournament)
reads and checks the files (``reading``), then writes them (``writing``)."""
