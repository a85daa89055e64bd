// How the charts' x axes keep their labels apart: uPlot draws them on a
// canvas where nothing stops two labels from running together.

/** A raider's name on the Durations axis: at most this many characters (the Durations table has it whole). */
const NAME_MAX = 16;
/** About the width of one character of uPlot's axis font (12px sans-serif), in CSS pixels. */
const CHAR_PX = 7;
/** Room one label needs along the axis once it is turned 45 degrees: a line's height over the cosine. */
const SLANTED_PX = 24;
/** Between two labels side by side, at least. */
const GAP_PX = 10;

/** A name cut at NAME_MAX characters with `…`. */
function short(name) {
  return name.length > NAME_MAX ? `${name.slice(0, NAME_MAX - 1)}…` : name;
}

/**
 * The labels of the Durations axis for `names` on a plot `plotWidth` wide:
 * level when each fits its share of the width; else turned 45 degrees (the
 * axis as high as the longest needs), and only every `every`-th one when
 * even so they would touch.
 */
export function nameAxis(names, plotWidth) {
  const labels = names.map(short);
  const share = plotWidth / Math.max(1, names.length);
  const widest = Math.max(0, ...labels.map((l) => l.length)) * CHAR_PX;
  if (widest + GAP_PX <= share) return { labels, every: 1, rotate: 0, size: 30 };
  return { labels, every: Math.ceil(SLANTED_PX / share), rotate: -45, size: Math.ceil(widest * Math.SQRT1_2) + 24 };
}

/** Least room between two time labels (`12:30pm` is about 50 px wide): uPlot's default would let them touch. */
export const TIME_LABEL_SPACE = 80;
