"""Importers of published studies into annotation campaigns: ``abceval`` (an ABC-Eval
study as finished campaigns of kinds abc_eval, likert and comparative)."""
