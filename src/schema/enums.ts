import type { StatName } from '../domain.js';
import { builder } from './builder.js';

export const PrivacyEnum = builder.enumType('Privacy', {
  description: 'Who may see a website\'s statistics page.',
  values: {
    PUBLIC: { value: 'PUBLIC', description: 'Anyone with the link.' },
    PRIVATE: { value: 'PRIVATE', description: 'Only the owner, when signed in.' },
    PASSWORD: { value: 'PASSWORD', description: 'Anyone who knows the website\'s password.' },
  } as const,
});

export const SortDirectionEnum = builder.enumType('SortDirection', {
  description: 'Order of a sorted list.',
  values: {
    ASC: { value: 'asc', description: 'Smallest (or oldest, or A) first.' },
    DESC: { value: 'desc', description: 'Largest (or newest, or Z) first.' },
  } as const,
});

export const WebsiteSortFieldEnum = builder.enumType('WebsiteSortField', {
  description: 'What a list of websites is sorted by.',
  values: {
    CREATED_AT: { value: 'id', description: 'When the website was added.' },
    DOMAIN: { value: 'domain', description: 'The domain name, alphabetically.' },
  } as const,
});

export const StatSortFieldEnum = builder.enumType('StatSortField', {
  description: 'What a list of statistic rows is sorted by.',
  values: {
    COUNT: { value: 'count', description: 'The summed count of the row.' },
    VALUE: { value: 'value', description: 'The row\'s value (a day, a country, a page...).' },
  } as const,
});

const statNames: Record<string, { value: StatName; description: string }> = {
  BROWSER: { value: 'browser', description: 'Visitors by browser, e.g. "Chrome".' },
  CAMPAIGN: { value: 'campaign', description: 'Visitors by UTM campaign name.' },
  CITY: { value: 'city', description: 'Visitors by city, as "COUNTRY_CODE:City", e.g. "US:New York, NY".' },
  CONTINENT: { value: 'continent', description: 'Visitors by continent, as "CODE:Name", e.g. "EU:Europe".' },
  COUNTRY: { value: 'country', description: 'Visitors by country, as "CODE:Name", e.g. "US:United States".' },
  DEVICE: { value: 'device', description: 'Visitors by device type, e.g. "desktop".' },
  EVENT: { value: 'event', description: 'Custom events, as "name:value:unit" (value and unit may be empty).' },
  LANDING_PAGE: {
    value: 'landing_page',
    description: 'Visits by entry page (path with query, like PAGE). Only installs that keep it; others answer UNSUPPORTED.',
  },
  LANGUAGE: { value: 'language', description: 'Visitors by two-letter browser language, e.g. "en".' },
  OPERATING_SYSTEM: { value: 'operating_system', description: 'Visitors by operating system, e.g. "Windows".' },
  PAGE: { value: 'page', description: 'Pageviews by page path with query, e.g. "/pricing?plan=pro".' },
  PAGEVIEW: { value: 'pageview', description: 'Pageviews per day: each row\'s value is a date YYYY-MM-DD.' },
  PAGEVIEW_HOUR: {
    value: 'pageview_hour',
    description: 'Pageviews by hour of day, "00" to "23", summed over the range. Only installs that keep it; others answer UNSUPPORTED.',
  },
  REFERRER: { value: 'referrer', description: 'Visitors by referring host.' },
  SCREEN_RESOLUTION: { value: 'screen_resolution', description: 'Visitors by screen size, e.g. "1920x1080".' },
  VISITOR: { value: 'visitor', description: 'Unique visitors per day: each row\'s value is a date YYYY-MM-DD.' },
  VISITOR_HOUR: {
    value: 'visitor_hour',
    description: 'Visitors by hour of day, "00" to "23", summed over the range. Only installs that keep it; others answer UNSUPPORTED.',
  },
};

export const StatNameEnum = builder.enumType('StatName', {
  description:
    'A statistic the analytics service keeps for every website. Installs of different versions name some of them differently on the wire; the gateway finds out which (README: "Installs and versions").',
  values: statNames,
});
