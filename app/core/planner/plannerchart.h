// PlannerChart: the Planner chart's arithmetic, so the page only binds and draws. The budget
// axis in GiB (MiB for tiny models) widened to round ticks that fit the plot at the label
// font; the tokens/s axis from 0 to a round top; where a budget lies on the plot; the marked
// budgets' names placed so that none overlaps another; the forecast as the series' points.
// The page sets the inputs (the plan's figures, the plot's width, the label font).
#pragma once

#include <QFont>
#include <QObject>
#include <QQmlEngine>
#include <QVariantList>

class PlannerChart : public QObject {
    Q_OBJECT
    QML_ELEMENT

    // Inputs. The budget axis must show axisMinBytes..axisMaxBytes (PlannerController's).
    Q_PROPERTY(qint64 axisMinBytes READ axisMinBytes WRITE setAxisMinBytes NOTIFY inputsChanged)
    Q_PROPERTY(qint64 axisMaxBytes READ axisMaxBytes WRITE setAxisMaxBytes NOTIFY inputsChanged)
    Q_PROPERTY(double maxTokensPerSecond READ maxTokensPerSecond WRITE setMaxTokensPerSecond NOTIFY inputsChanged)
    // The forecast: [{budget, tokensPerSecond, hitRate}], as PlannerController.points.
    Q_PROPERTY(QVariantList points READ points WRITE setPoints NOTIFY inputsChanged)
    // The plot area's width in px, and the pixel size of the tick labels and the marks' names
    // (in the application's font; a size, not a QFont, since this module is QtQml only).
    Q_PROPERTY(double plotWidth READ plotWidth WRITE setPlotWidth NOTIFY inputsChanged)
    Q_PROPERTY(int labelPixelSize READ labelPixelSize WRITE setLabelPixelSize NOTIFY inputsChanged)
    // The least space between two tick labels, px.
    Q_PROPERTY(double labelGap READ labelGap WRITE setLabelGap NOTIFY inputsChanged)
    Q_PROPERTY(qint64 floorBytes READ floorBytes WRITE setFloorBytes NOTIFY inputsChanged)
    Q_PROPERTY(qint64 cliffBytes READ cliffBytes WRITE setCliffBytes NOTIFY inputsChanged)
    Q_PROPERTY(qint64 budgetBytes READ budgetBytes WRITE setBudgetBytes NOTIFY inputsChanged)
    // The budgets to mark with a line and a name: [{name, bytes, color}].
    Q_PROPERTY(QVariantList marks READ marks WRITE setMarks NOTIFY inputsChanged)

    // The axes, in the axis unit (GiB, or MiB when the axis ends below 4 GiB).
    Q_PROPERTY(bool inMiB READ inMiB NOTIFY axesChanged)
    Q_PROPERTY(double budgetMin READ budgetMin NOTIFY axesChanged)
    Q_PROPERTY(double budgetMax READ budgetMax NOTIFY axesChanged)
    Q_PROPERTY(double budgetStep READ budgetStep NOTIFY axesChanged)
    Q_PROPERTY(int budgetTickCount READ budgetTickCount NOTIFY axesChanged)
    // ValueAxis.labelFormat, "%.1f GiB": the digits the step needs, and the unit.
    Q_PROPERTY(QString budgetLabelFormat READ budgetLabelFormat NOTIFY axesChanged)
    Q_PROPERTY(double speedMax READ speedMax NOTIFY axesChanged)
    Q_PROPERTY(double speedStep READ speedStep NOTIFY axesChanged)
    Q_PROPERTY(int speedTickCount READ speedTickCount NOTIFY axesChanged)
    Q_PROPERTY(QString speedLabelFormat READ speedLabelFormat NOTIFY axesChanged)
    // The budget slider on the same axis: its end (at least a little past budgetMin) and step.
    Q_PROPERTY(double sliderMax READ sliderMax NOTIFY axesChanged)
    Q_PROPERTY(double sliderStep READ sliderStep NOTIFY axesChanged)
    // The chart's least height: a plot of about 120 px under the legend and over the tick
    // labels, which grow with the font, and so does this.
    Q_PROPERTY(double minimumHeight READ minimumHeight NOTIFY axesChanged)

    // Positions, px from the plot's left edge, and the budget in the axis unit.
    Q_PROPERTY(double budgetValue READ budgetValue NOTIFY positionsChanged)
    Q_PROPERTY(double budgetX READ budgetX NOTIFY positionsChanged)
    // The zone below the floor (refused) runs from the plot's left edge to here.
    Q_PROPERTY(double refusedWidth READ refusedWidth NOTIFY positionsChanged)
    // The zone past the paging cliff: from cliffX to the plot's right edge, when it shows.
    Q_PROPERTY(bool cliffZoneShown READ cliffZoneShown NOTIFY positionsChanged)
    Q_PROPERTY(double cliffX READ cliffX NOTIFY positionsChanged)
    Q_PROPERTY(double cliffZoneWidth READ cliffZoneWidth NOTIFY positionsChanged)
    // The marks on the axis' range, by budget: each input mark with lineX (its line) and
    // labelX, labelY (its name: right of the line, or left of it at the plot's right edge, on
    // the first row from the top where it meets no other name).
    Q_PROPERTY(QVariantList placedMarks READ placedMarks NOTIFY positionsChanged)
    // How far a name's backdrop reaches around its text (a negative margin).
    Q_PROPERTY(double markBackdropMargin READ markBackdropMargin CONSTANT)

    // The series' points, x in the axis unit: tokens/s where a speed is predicted, and the
    // hit rate in percent.
    Q_PROPERTY(QVariantList speedPoints READ speedPoints NOTIFY seriesChanged)
    Q_PROPERTY(QVariantList hitPoints READ hitPoints NOTIFY seriesChanged)

public:
    explicit PlannerChart(QObject *parent = nullptr);

    qint64 axisMinBytes() const { return m_axisMin; }
    void setAxisMinBytes(qint64 bytes);
    qint64 axisMaxBytes() const { return m_axisMax; }
    void setAxisMaxBytes(qint64 bytes);
    double maxTokensPerSecond() const { return m_maxTokensPerSecond; }
    void setMaxTokensPerSecond(double tokensPerSecond);
    QVariantList points() const { return m_points; }
    void setPoints(const QVariantList &points);
    double plotWidth() const { return m_plotWidth; }
    void setPlotWidth(double px);
    int labelPixelSize() const { return m_font.pixelSize(); }
    void setLabelPixelSize(int px);
    double labelGap() const { return m_labelGap; }
    void setLabelGap(double px);
    qint64 floorBytes() const { return m_floor; }
    void setFloorBytes(qint64 bytes);
    qint64 cliffBytes() const { return m_cliff; }
    void setCliffBytes(qint64 bytes);
    qint64 budgetBytes() const { return m_budget; }
    void setBudgetBytes(qint64 bytes);
    QVariantList marks() const { return m_marks; }
    void setMarks(const QVariantList &marks);

    bool inMiB() const { return m_axes.inMiB; }
    double budgetMin() const { return m_axes.budgetMin; }
    double budgetMax() const { return m_axes.budgetMax; }
    double budgetStep() const { return m_axes.budgetStep; }
    int budgetTickCount() const { return m_axes.budgetTicks; }
    QString budgetLabelFormat() const { return m_axes.budgetFormat; }
    double speedMax() const { return m_axes.speedMax; }
    double speedStep() const { return m_axes.speedStep; }
    int speedTickCount() const { return m_axes.speedTicks; }
    QString speedLabelFormat() const { return m_axes.speedFormat; }
    double sliderMax() const { return m_axes.sliderMax; }
    double sliderStep() const { return m_axes.sliderStep; }
    double minimumHeight() const { return m_axes.minimumHeight; }

    double budgetValue() const { return m_positions.budgetValue; }
    double budgetX() const { return m_positions.budgetX; }
    double refusedWidth() const { return m_positions.refusedWidth; }
    bool cliffZoneShown() const { return m_positions.cliffShown; }
    double cliffX() const { return m_positions.cliffX; }
    double cliffZoneWidth() const { return m_positions.cliffWidth; }
    QVariantList placedMarks() const { return m_positions.marks; }
    double markBackdropMargin() const { return -MarkPad; }

    QVariantList speedPoints() const { return m_series.speed; }
    QVariantList hitPoints() const { return m_series.hit; }

    // Bytes per axis unit: 2^20 or 2^30.
    double unitBytes() const;
    // A value on the budget axis (the slider's) in whole bytes.
    Q_INVOKABLE qint64 bytesAt(double value) const;
    // Where a budget lies, px from the plot's left edge (0 while the axis has no width).
    double xOf(qint64 bytes) const;
    // The label the budget axis writes at a value for a step ("40 GiB", "2.5 MiB").
    QString budgetLabel(double value, double step) const;

Q_SIGNALS:
    void inputsChanged();
    void axesChanged();
    void positionsChanged();
    void seriesChanged();

private:
    // A name's padding inside its backdrop, and the least space between two names, px.
    static constexpr double MarkPad = 2;
    static constexpr double MarkGap = 4;

    struct Axes {
        bool inMiB = true;
        double budgetMin = 0, budgetMax = 1, budgetStep = 0;
        int budgetTicks = 5;
        QString budgetFormat;
        double speedMax = 0.1, speedStep = 0;
        int speedTicks = 5;
        QString speedFormat;
        double sliderMax = 1, sliderStep = 0.05;
        double minimumHeight = 0;
        bool operator==(const Axes &) const = default;
    };
    struct Positions {
        double budgetValue = 0, budgetX = 0, refusedWidth = 0;
        bool cliffShown = false;
        double cliffX = 0, cliffWidth = 0;
        QVariantList marks;
        bool operator==(const Positions &) const = default;
    };
    struct Series {
        QVariantList speed, hit;
        bool operator==(const Series &) const = default;
    };

    // Recomputes what follows from the inputs; signals only what changed.
    void update();
    Axes axesFor() const;
    Positions positionsFor() const;
    Series seriesFor() const;
    QVariantList placeMarks() const;

    qint64 m_axisMin = 0;
    qint64 m_axisMax = 0;
    double m_maxTokensPerSecond = 0;
    QVariantList m_points;
    double m_plotWidth = 0;
    QFont m_font;
    double m_labelGap = 0;
    qint64 m_floor = 0;
    qint64 m_cliff = 0;
    qint64 m_budget = 0;
    QVariantList m_marks;

    Axes m_axes;
    Positions m_positions;
    Series m_series;
};
