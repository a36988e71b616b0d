// Colours, spacing, radii and type scale, defined once (UI.md "Look").
pragma Singleton
import QtQuick
import WasteStudio.Core

QtObject {
    id: theme

    readonly property SystemPalette system: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property bool systemDark: system.window.hslLightness < 0.5
    readonly property bool dark: AppSettings.theme === "dark"
                                 || (AppSettings.theme === "system" && systemDark)

    // Surfaces and text
    readonly property color background: dark ? "#17191c" : "#f6f7f9"
    readonly property color surface: dark ? "#202328" : "#ffffff"
    readonly property color surfaceAlt: dark ? "#2a2e34" : "#eef0f3"
    readonly property color border: dark ? "#3a3f47" : "#d9dde3"
    readonly property color text: dark ? "#e8eaed" : "#1d2127"
    readonly property color textMuted: dark ? "#9aa3ad" : "#5d6773"
    readonly property color accent: dark ? "#6ea8fe" : "#2f6fdf"
    readonly property color accentText: dark ? "#0d1b2e" : "#ffffff"
    readonly property color codeBackground: dark ? "#1b1e22" : "#f3f4f6"
    readonly property color dropZone: dark ? "#cc202328" : "#ddffffff"

    // State colours: always paired with words, never alone.
    readonly property color ok: dark ? "#4cc38a" : "#1f8a4c"
    readonly property color warning: dark ? "#f0b84c" : "#a86a00"
    readonly property color danger: dark ? "#f2727a" : "#c4343e"
    readonly property color dangerZone: dark ? "#40f2727a" : "#30c4343e"

    // 4 px grid; type scale 12 / 14 / 16 / 20 / 28
    readonly property int unit: 4
    readonly property int spacing: 8
    readonly property int padding: 16
    readonly property int radius: 6
    readonly property int fontSmall: Math.max(10, AppSettings.fontSize - 2)
    readonly property int fontBody: AppSettings.fontSize
    readonly property int fontLarge: AppSettings.fontSize + 2
    readonly property int fontTitle: AppSettings.fontSize + 6
    readonly property int fontDisplay: AppSettings.fontSize + 14
    readonly property string monoFamily: "DejaVu Sans Mono"
}
