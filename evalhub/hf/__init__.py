"""Studies as Hugging Face datasets: Parquet tables with a dataset card, in and out."""
