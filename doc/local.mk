# Manual pages (roff, -man macros), distributed as they are.
dist_man_MANS += \
    %reldir%/gannet.8 \
    %reldir%/gannetctl.8 \
    %reldir%/gannet.conf.5
