# man/: manual pages of trainsim, of each of its commands and of trainsim-trainer. They are written at
# build time by man/man-from-help from the built programs' --help, so a page cannot say other
# than --help does; what --help does not say (exit statuses, environment, files) comes from the
# one-topic roff fragments here. Not distributed: a tarball's build writes them again, as distcheck
# does. tests/man-pages.sh holds every page against its --help and renders it.
#
# Every command of `trainsim --help` needs its page here (tests/man-pages.sh fails without one).
man_commands = run sweep search collective topology fit calib-plan compare straggler goodput validate \
	sensitivity import
man_trainsim_pages = man/trainsim.1 man/trainsim-run.1 man/trainsim-sweep.1 man/trainsim-search.1 \
	man/trainsim-collective.1 man/trainsim-topology.1 man/trainsim-fit.1 man/trainsim-calib-plan.1 \
	man/trainsim-compare.1 man/trainsim-straggler.1 man/trainsim-goodput.1 man/trainsim-validate.1 \
	man/trainsim-sensitivity.1 man/trainsim-import.1
man_fragments = man/exit-status.inc man/scenarios.inc man/heap.inc man/plots.inc man/progress.inc man/mpi.inc \
	man/trainsim.inc man/trainer.inc
man_MANS = $(man_trainsim_pages)
man_see_also = trainsim trainsim-run trainsim-sweep trainsim-search trainsim-collective trainsim-topology \
	trainsim-fit trainsim-calib-plan trainsim-compare trainsim-straggler trainsim-goodput trainsim-validate \
	trainsim-sensitivity trainsim-import
EXTRA_DIST += man/man-from-help $(man_fragments)
CLEANFILES += $(man_MANS) man/pages.stamp

MAN_FROM_HELP = AWK='$(AWK)' $(SHELL) $(srcdir)/man/man-from-help -V '$(PACKAGE_NAME) $(PACKAGE_VERSION)' \
	-D pkgdatadir='$(pkgdatadir)' -s '$(man_see_also)'

# One run of the generator writes every trainsim page (the stamp stands for all of them); the case
# below says which fragments each page takes.
man/pages.stamp: trainsim$(EXEEXT) $(srcdir)/man/man-from-help $(man_fragments)
	@$(MKDIR_P) man
	$(AM_V_GEN)for c in '' $(man_commands); do \
	  page=trainsim$${c:+-$$c}; f="-i $(srcdir)/man/exit-status.inc -i $(srcdir)/man/scenarios.inc -i $(srcdir)/man/heap.inc"; \
	  case $$c in \
	    '') f="$$f -i $(srcdir)/man/trainsim.inc" ;; \
	    run|fit|validate) f="$$f -i $(srcdir)/man/plots.inc" ;; \
	    sweep|search) f="$$f -i $(srcdir)/man/plots.inc -i $(srcdir)/man/progress.inc -i $(srcdir)/man/mpi.inc" ;; \
	  esac; \
	  $(MAN_FROM_HELP) $$f $$page ./trainsim$(EXEEXT) $$c > man/$$page.1-t && mv -f man/$$page.1-t man/$$page.1 \
	    || { rm -f man/$$page.1-t; exit 1; }; \
	done
	@touch $@
# Recover a page deleted after the stamp was written (automake manual, "Multiple Outputs").
$(man_trainsim_pages): man/pages.stamp
	@test -f $@ || { rm -f man/pages.stamp; $(MAKE) $(AM_MAKEFLAGS) man/pages.stamp; }

if HAVE_CUDA
if HAVE_NCCL
man_MANS += man/trainsim-trainer.1
man_see_also += trainsim-trainer
man/trainsim-trainer.1: calib/trainer/trainsim-trainer$(EXEEXT) $(srcdir)/man/man-from-help \
	$(srcdir)/man/trainer.inc
	@$(MKDIR_P) man
	$(AM_V_GEN)$(MAN_FROM_HELP) -i $(srcdir)/man/trainer.inc trainsim-trainer \
	  calib/trainer/trainsim-trainer$(EXEEXT) > $@-t && mv -f $@-t $@
endif
endif
