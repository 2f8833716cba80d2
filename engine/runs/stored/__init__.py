"""Stored runs read back (`reading`: agreement, one run against another, export) and scored
again as new runs (`rescoring`)."""
