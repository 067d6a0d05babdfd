/* sf_speedscope.c - speedscope's file format through sf_jw (see sf_speedscope.h). */
#include "sf_speedscope.h"

void sf_ss_begin(struct sf_jw *w, const char *name, const char *exporter)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "$schema", "https://www.speedscope.app/file-format-schema.json");
    sf_jw_str(w, "exporter", exporter);
    sf_jw_str(w, "name", name);
    sf_jw_int(w, "activeProfileIndex", 0);
    sf_jw_arr(w, "profiles");
}

void sf_ss_profile(struct sf_jw *w)
{
    sf_jw_obj(w, NULL);
    sf_jw_arr(w, "samples");
}

void sf_ss_sample(struct sf_jw *w, const uint32_t *frames, size_t n)
{
    sf_jw_arr(w, NULL);
    for (size_t i = 0; i < n; i++)
        sf_jw_int(w, NULL, frames[i]);
    sf_jw_end(w);
}

void sf_ss_weights(struct sf_jw *w)
{
    sf_jw_end(w); /* samples */
    sf_jw_arr(w, "weights");
}

void sf_ss_profile_end(struct sf_jw *w, const char *name, const char *unit, double end)
{
    sf_jw_end(w); /* weights */
    sf_jw_str(w, "type", "sampled");
    sf_jw_str(w, "name", name);
    sf_jw_str(w, "unit", unit);
    sf_jw_int(w, "startValue", 0);
    sf_jw_num(w, "endValue", end);
    sf_jw_end(w); /* the profile */
}

void sf_ss_frames(struct sf_jw *w)
{
    sf_jw_end(w); /* profiles */
    sf_jw_obj(w, "shared");
    sf_jw_arr(w, "frames");
}

void sf_ss_frame(struct sf_jw *w, const char *name, size_t len)
{
    sf_jw_obj(w, NULL);
    sf_jw_strn(w, "name", name, len);
    sf_jw_end(w);
}

int sf_ss_end(struct sf_jw *w)
{
    sf_jw_end(w); /* frames */
    sf_jw_end(w); /* shared */
    sf_jw_end(w); /* the file */
    return sf_jw_finish(w);
}
