# (filled by the module's owner)
