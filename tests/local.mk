# tests/: GLib g_test programs and scripts, run through automake's TAP driver.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_TESTS_ENVIRONMENT = \
	G_DEBUG=gc-friendly; export G_DEBUG; \
	MALLOC_PERTURB_=$$(( $${RANDOM:-7} % 255 + 1 )); export MALLOC_PERTURB_; \
	G_TEST_SRCDIR='$(abs_srcdir)/tests'; export G_TEST_SRCDIR; \
	G_TEST_BUILDDIR='$(abs_builddir)/tests'; export G_TEST_BUILDDIR; \
	TRAINSIM='$(abs_builddir)/trainsim'; export TRAINSIM; \
	TRAINSIM_SRCDIR='$(abs_srcdir)'; export TRAINSIM_SRCDIR;
TEST_LIBS = $(TRAINSIM_LIBS)

TESTS += tests/layering.sh
dist_noinst_SCRIPTS += tests/layering.sh tests/byte-identical.sh
dist_noinst_DATA += tests/tap.sh

include tests/model.mk
include tests/schedule.mk
include tests/runner.mk
include tests/scenario.mk
include tests/engine.mk
include tests/net.mk
include tests/collective.mk
include tests/calib.mk
include tests/goodput.mk
include tests/compare.mk
include tests/planning.mk
include tests/validate.mk
include tests/import.mk
include tests/man.mk
