import { createContext, useContext } from 'react';

/**
 * Whether the terminal UI draws in colour: false with NO_COLOR or `--no-color`. Bold, dim and
 * inverse stay, being no colours: the selected row and the rules still read.
 */
export const ColorsContext = createContext(true);

/** Ink `Text` props for `color`, or none when the UI draws without colours: `<Text {...paint('red')}>`. */
export function usePaint(): (color: string) => { readonly color?: string } {
  const colors = useContext(ColorsContext);
  return (color) => (colors ? { color } : {});
}
