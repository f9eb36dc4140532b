"""``python -m deid_ds`` is the ``deid-ds`` command."""

from deid_ds.cli import main

main(prog_name="deid-ds")
