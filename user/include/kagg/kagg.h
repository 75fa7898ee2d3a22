/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* kagg/kagg.h - everything libkagg exports. */
#ifndef KAGG_KAGG_H
#define KAGG_KAGG_H

#include <kagg/common.h>
#include <kagg/session.h>
#include <kagg/snapshot.h>
#include <kagg/offcpu.h>
#include <kagg/ringbuf.h>
#include <kagg/rb_format.h>
#include <kagg/tracedat.h>
#include <kagg/funclat.h>
#include <kagg/runqlat.h>
#include <kagg/syscount.h>
#include <kagg/profile.h>
#include <kagg/stat.h>
#include <kagg/field_hist.h>
#include <kagg/tprec.h>
#include <kagg/prom.h>
#include <kagg/flame.h>
#include <kagg/pprof.h>
#include <kagg/heatmap.h>
#include <kagg/html.h>
#include <kagg/prog.h>

#endif
