import { Box, Text } from 'ink';
import { fit } from './figures.js';
import { usePaint } from './colors.js';

/** A line that asks for input: a message, a number, a yes or no. */
export interface PromptState {
  readonly kind: 'message' | 'workers' | 'stop' | 'quit';
  readonly label: string;
  readonly text: string;
  /** The agent or task it is about, where it is about one. */
  readonly target: string | null;
}

export interface FooterProps {
  readonly prompt: PromptState | null;
  readonly flash: { readonly ok: boolean; readonly text: string } | null;
  readonly keys: string;
  readonly width: number;
}

/** The last two lines: what a key just did (or the prompt being typed), and the keys there are. */
export function Footer({ prompt, flash, keys, width }: FooterProps) {
  const paint = usePaint();
  return (
    <Box flexDirection="column" height={2}>
      {prompt !== null ? (
        <Text wrap="truncate" {...paint('yellow')}>
          {fit(`${prompt.label} ${prompt.text}`, width - 1)}█
        </Text>
      ) : flash !== null ? (
        <Text wrap="truncate" {...paint(flash.ok ? 'green' : 'red')}>
          {fit(flash.text, width)}
        </Text>
      ) : (
        <Text> </Text>
      )}
      <Text dimColor wrap="truncate">
        {fit(keys, width)}
      </Text>
    </Box>
  );
}
