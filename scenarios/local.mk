# scenarios/: ready INI files, embedded in the binary as a GResource.
