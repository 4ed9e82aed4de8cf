/* colour.c — the flame graph's fills and the text drawn on them: flamegraph.pl's palettes (a colour from a hash
 * of the label, so a frame keeps its colour from one graph to the next), the differential scale (red grew, blue
 * shrank), and for every fill a text colour whose WCAG contrast against it is at least 4.5:1. */
#include "render/flame.h"

#include <math.h>
#include <string.h>

#include "base/hashmap.h"

static const char *const palettes[] = { "hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red",
					"green", "blue", "aqua", "yellow", "purple", "orange", NULL };

bool flame_palette_valid(const char *name, const char **list)
{
	if (list)
		*list = "hot, mem, io, wakeup, chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange";
	for (size_t i = 0; palettes[i]; i++)
		if (strcmp(palettes[i], name) == 0)
			return true;
	return false;
}

/* The base palette a mixed one (perl, java, js) uses for a frame, by its kind and name. */
static const char *base_palette(const char *pal, const char *s, size_t n, enum frame_kind kind)
{
	bool java = strcmp(pal, "java") == 0, js = strcmp(pal, "js") == 0;
	if (strcmp(pal, "perl") == 0) {
		if (kind == FRAME_KERNEL)
			return "orange";
		return memmem(s, n, "::", 2) || memmem(s, n, ".pm", 3) ? "green" : "red";
	}
	if (!java && !js)
		return pal;
	if (kind == FRAME_KERNEL)
		return "orange";
	if (kind == FRAME_JIT || memchr(s, '/', n) || (js && memchr(s, ':', n)))
		return "green";
	return memmem(s, n, "::", 2) ? "yellow" : "red";
}

void flame_palette_rgb(const char *pal, double v1, double v2, double v3, int rgb[3])
{
	int r, g, b;
	if (strcmp(pal, "mem") == 0) {
		r = 0; g = 190 + (int)(50 * v2); b = (int)(210 * v1);
	} else if (strcmp(pal, "io") == 0) {
		r = 80 + (int)(60 * v1); g = r; b = 190 + (int)(55 * v2);
	} else if (strcmp(pal, "wakeup") == 0 || strcmp(pal, "aqua") == 0) {
		r = 50 + (int)(60 * v1); g = 165 + (int)(55 * v1); b = 165 + (int)(55 * v1);
	} else if (strcmp(pal, "chain") == 0 || strcmp(pal, "blue") == 0) {
		r = 80 + (int)(60 * v1); g = 80 + (int)(60 * v1); b = 205 + (int)(50 * v1);
	} else if (strcmp(pal, "red") == 0) {
		r = 200 + (int)(55 * v1); g = 50 + (int)(80 * v1); b = g;
	} else if (strcmp(pal, "green") == 0) {
		r = 50 + (int)(60 * v1); g = 200 + (int)(55 * v1); b = r;
	} else if (strcmp(pal, "yellow") == 0) {
		r = 175 + (int)(55 * v1); g = r; b = 50 + (int)(20 * v1);
	} else if (strcmp(pal, "purple") == 0) {
		r = 190 + (int)(65 * v1); g = 80 + (int)(60 * v1); b = r;
	} else if (strcmp(pal, "orange") == 0) {
		r = 190 + (int)(65 * v1); g = 90 + (int)(65 * v1); b = 0;
	} else { /* hot */
		r = 205 + (int)(50 * v3); g = (int)(230 * v1); b = (int)(55 * v2);
	}
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

void flame_frame_rgb(const char *pal, const char *label, size_t n, enum frame_kind kind, int rgb[3])
{
	uint64_t h = hash_bytes(label, n);
	double v1 = (double)(h & 0xffff) / 65536.0, v2 = (double)((h >> 16) & 0xffff) / 65536.0,
	       v3 = (double)((h >> 32) & 0xffff) / 65536.0;
	flame_palette_rgb(base_palette(pal, label, n, kind), v1, v2, v3, rgb);
}

void flame_diff_rgb(double change, int rgb[3])
{
	double ratio = fabs(change) > 1 ? 1 : fabs(change);
	int fade = (int)lround(220 * (1 - ratio));
	if (change > 0) {
		rgb[0] = 255; rgb[1] = fade; rgb[2] = fade;
	} else if (change < 0) {
		rgb[0] = fade; rgb[1] = fade; rgb[2] = 255;
	} else {
		rgb[0] = rgb[1] = rgb[2] = 220;
	}
}

/* WCAG 2 relative luminance of an sRGB colour. */
static double luminance(const int rgb[3])
{
	static const double weight[3] = { 0.2126, 0.7152, 0.0722 };
	double l = 0;
	for (int i = 0; i < 3; i++) {
		double c = rgb[i] / 255.0;
		l += weight[i] * (c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
	}
	return l;
}

double flame_contrast(const int a[3], const int b[3])
{
	double la = luminance(a), lb = luminance(b);
	return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

bool flame_text_white(const int fill[3])
{
	/* black when it reads at 4.5:1; below that the fill's luminance is under 0.175, where white gives > 4.6:1 */
	static const int black[3] = { 0, 0, 0 };
	return flame_contrast(fill, black) < FLAME_MIN_CONTRAST;
}
