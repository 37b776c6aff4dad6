# Manual pages (man/local.mk): each against its program's --help, and rendered without warnings.
TESTS += tests/man-pages.sh
dist_noinst_SCRIPTS += tests/man-pages.sh
