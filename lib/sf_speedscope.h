/* sf_speedscope.h - speedscope's file format (jlfwong/speedscope,
 * src/lib/file-format-spec.ts), written through sf_jw: the one encoder for
 * `flamegraph --format speedscope` and `spanfold-export --format speedscope`.
 *
 *   {"$schema":"https://www.speedscope.app/file-format-schema.json",
 *    "exporter":..,"name":..,"activeProfileIndex":0,
 *    "profiles":[{"samples":[[0,1],[0,1,2]],"weights":[3,2],
 *                 "type":"sampled","name":..,"unit":"none","startValue":0,"endValue":5}],
 *    "shared":{"frames":[{"name":"main"},{"name":"f"},{"name":"g"}]}}
 *
 * Written in that order, which a streaming writer can keep: a profile's weights are
 * known after its samples and its total after its weights, and the frames after every
 * profile (JSON members are unordered; speedscope reads any order).  A sample is one
 * stack of frame indices, root first.
 *
 *   sf_ss_begin(w, name, exporter);
 *   for each profile:
 *       sf_ss_profile(w);  each sample: sf_ss_sample(w, idx, n);
 *       sf_ss_weights(w);  each sample: sf_jw_int or sf_jw_num(w, NULL, weight);
 *       sf_ss_profile_end(w, name, unit, total);
 *   sf_ss_frames(w);  each frame: sf_ss_frame(w, name, len);
 *   rc = sf_ss_end(w);
 */
#ifndef SF_SPEEDSCOPE_H
#define SF_SPEEDSCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "sf_json.h"

/* The file's object and its profiles array; w from sf_jw_init. */
void sf_ss_begin(struct sf_jw *w, const char *name, const char *exporter);
/* A "sampled" profile: its samples array opens. */
void sf_ss_profile(struct sf_jw *w);
/* One sample: the stack as n frame indices, root first. */
void sf_ss_sample(struct sf_jw *w, const uint32_t *frames, size_t n);
/* After the samples: the weights array opens, one number per sample in their order. */
void sf_ss_weights(struct sf_jw *w);
/* After the weights: the profile's name, unit ("none", "nanoseconds", ...) and its
 * range 0..end (the sum of its weights). */
void sf_ss_profile_end(struct sf_jw *w, const char *name, const char *unit, double end);
/* After the last profile: the shared frames array opens; frame i is the i-th
 * sf_ss_frame. */
void sf_ss_frames(struct sf_jw *w);
void sf_ss_frame(struct sf_jw *w, const char *name, size_t len);
/* Closes the file and writes its newline: sf_jw_finish's answer. */
int sf_ss_end(struct sf_jw *w);

#endif
