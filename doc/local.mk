# Manual pages (roff, -man macros), distributed as they are.
dist_man_MANS += \
    %reldir%/gannet.8 \
    %reldir%/gannetctl.8 \
    %reldir%/gannet-logcat.1 \
    %reldir%/gannet.conf.5

# The module writer's guide.
dist_doc_DATA += %reldir%/modules.md %reldir%/specweb99.md %reldir%/binary-log.md
